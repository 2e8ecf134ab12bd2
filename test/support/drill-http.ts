import { request } from 'undici';
import { readResponse } from './http-response.js';
import { drillAgent } from './drill-instance.js';

/** One answer of the service, or none (status 0: the connection failed or timed out). */
export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- drills read arbitrary members
  body: any;
  headers: Record<string, string>;
  error: string | null;
  sentAt: number;
  receivedAt: number;
}

interface CallOptions {
  key?: string;
  body?: unknown;
  idempotencyKey?: string;
  cookie?: string;
  timeoutMs?: number;
}

/** A request to the service over HTTPS; never throws. */
async function call(baseUrl: string, method: 'GET' | 'POST', urlPath: string, opts: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const sentAt = Date.now();
  const timeout = opts.timeoutMs ?? 30_000;
  try {
    const res = await request(`${baseUrl}${urlPath}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      dispatcher: drillAgent,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    const { status, body, headers: flat } = await readResponse(res, (text) => text);
    return { status, body, headers: flat, error: null, sentAt, receivedAt: Date.now() };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { status: 0, body: null, headers: {}, error: e.code ?? e.message ?? String(err), sentAt, receivedAt: Date.now() };
  }
}

export const isReplay = (a: Answer): boolean => a.status === 200 && a.body?._idempotent === true;

/** "409 ROOM_OCCUPIED", "200", "0 ECONNRESET": an answer in a few characters. */
export function describeAnswer(a: Answer): string {
  if (a.status === 0) return `no answer (${a.error ?? 'unknown'})`;
  const code = a.body && typeof a.body === 'object' && typeof a.body.code === 'string' ? ` ${a.body.code as string}` : '';
  return `${a.status}${code}`;
}

/** POST to the PMS API of `slug`. */
export function pmsPost(baseUrl: string, slug: string, path: string, key: string, idempotencyKey: string, body: unknown, timeoutMs?: number): Promise<Answer> {
  return call(baseUrl, 'POST', `/api/pms/v1/${slug}${path}`, { key, idempotencyKey, body, timeoutMs });
}
