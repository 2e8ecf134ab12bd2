import type { FastifyReply, FastifyRequest } from 'fastify';

/** An onSend hook: answers carrying guests' personal data, fresh keys or live state are never kept by a cache. */
export async function noStore<T>(_req: FastifyRequest, reply: FastifyReply, payload: T): Promise<T> {
  if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
  return payload;
}
