import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { createHotel, issueKeyPair } from '../../src/operations.js';
import { createTestStorage, guest, testEngines } from '../support/harness.js';
import { freePort } from '../support/postgres-cluster.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { readResponse } from '../support/http-response.js';
import { parseJsonOutput, runCli, spawnServe, storageEnv, waitForExit, waitForHttps, type ServeProcess, type Storage } from '../cli/cli-helpers.js';
import { scaled } from '../support/test-run.js';

// README.md, "Operating it" ("Traces") and docs/architecture.md, "Traces": `innsync serve`
// with OTEL_EXPORTER_OTLP_ENDPOINT set sends the spans of a PMS request, in the PMS's trace
// (its traceparent), to an OTLP/HTTP collector: the request's server span named by its
// route, its transaction, and the webhook delivery of the event it wrote. No attribute
// holds the guest's data or the key, and the log lines name the trace.

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: OtlpValue }>;
}
const SERVER = 2;
const CLIENT = 3;

/** An OTLP/HTTP collector (JSON encoding) on a free loopback port: keeps every span it is sent, and each export's resource attributes. */
class OtlpCollector {
  readonly spans: OtlpSpan[] = [];
  readonly resources: Array<Record<string, unknown>> = [];
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      };
      for (const rs of body.resourceSpans) {
        this.resources.push(attributesOf({ attributes: rs.resource.attributes } as OtlpSpan));
        for (const ss of rs.scopeSpans) this.spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function attributesOf(span: OtlpSpan): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of span.attributes ?? []) out[a.key] = a.value.stringValue ?? a.value.boolValue ?? a.value.doubleValue ?? Number(a.value.intValue);
  return out;
}

const randomHex = (bytes: number): string => Buffer.from(Array.from({ length: bytes }, () => Math.floor(Math.random() * 256))).toString('hex');

describe.each(testEngines())('traces of a PMS check-in (%s)', (engine) => {
  let storage: Storage;
  let handle: DatabaseHandle;
  let serve: ServeProcess;
  let base: string;
  let agent: Awaited<ReturnType<typeof waitForHttps>>['agent'];
  let key: string;
  const receiver = new WebhookReceiver();
  const collector = new OtlpCollector();
  const slug = `traced-${engine}`;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    const env = { ...storageEnv(storage), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
    handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    await migrateToLatest(handle.db);
    await createHotel(handle.db, slug, 'Traced Hotel');
    key = (await issueKeyPair(handle.db, slug)).live;
    const added = parseJsonOutput(await runCli(['webhook', 'add', slug, await receiver.listen(), '--json'], { env }));
    receiver.trust(added.secret);
    const port = await freePort();
    serve = spawnServe({
      ...env,
      PORT: String(port),
      HTTP_PORT: 'off',
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: await collector.listen(),
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    agent = (await waitForHttps(serve, storage.dataDir, port)).agent;
    base = `https://127.0.0.1:${port}/api/pms/v1/${slug}`;
  }, 60_000);

  afterAll(async () => {
    serve.child.kill('SIGTERM');
    await waitForExit(serve);
    await agent.close();
    await receiver.close();
    await collector.close();
    await handle.close();
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  const post = async (path: string, body: unknown, traceparent: string, idempotencyKey: string) =>
    readResponse(
      await request(`${base}${path}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey, traceparent },
        body: JSON.stringify(body),
      }),
    );
  const checkIn = (body: unknown, traceparent: string, idempotencyKey: string) => post('/guests/checkin', body, traceparent, idempotencyKey);
  const spansOf = async (traceId: string, name: string): Promise<OtlpSpan[]> => {
    await vi.waitFor(() => expect(collector.spans.some((s) => s.traceId === traceId && s.name === name)).toBe(true), { timeout: scaled(15_000) });
    return collector.spans.filter((s) => s.traceId === traceId);
  };

  it("the request, its transaction and the event's delivery are one trace, the PMS's; no attribute holds the guest's data or the key", async () => {
    const traceId = randomHex(16);
    const parentId = randomHex(8);
    const stay = guest({ firstName: 'Wilhelmina', lastName: 'Quixotestrand', email: 'wilhelmina.q@example.org', phone: '+441632960123' });
    const answer = await checkIn(stay, `00-${traceId}-${parentId}-01`, `trace-${engine}-1`);
    expect(answer.status).toBe(200);
    await vi.waitFor(() => expect(receiver.accepted()).toHaveLength(1), { timeout: scaled(15_000) });

    const spans = await spansOf(traceId, 'webhook.deliver');
    const server = spans.find((s) => s.kind === SERVER);
    expect(server).toMatchObject({ name: 'POST /api/pms/v1/:slug/guests/checkin', parentSpanId: parentId });
    expect(attributesOf(server!)).toMatchObject({
      'http.route': '/api/pms/v1/:slug/guests/checkin',
      'url.path': '/api/pms/v1/:slug/guests/checkin',
      'http.response.status_code': 200,
      'innsync.hotel': slug,
      'innsync.mode': 'live',
      'innsync.idempotent_replay': false,
    });
    const transaction = spans.find((s) => s.name === 'db.transaction');
    expect(transaction?.parentSpanId).toBe(server!.spanId);
    expect(attributesOf(transaction!)['innsync.db.retries']).toBe(0);
    const delivery = spans.find((s) => s.name === 'webhook.deliver');
    expect(delivery?.kind).toBe(CLIENT);
    expect(attributesOf(delivery!)).toMatchObject({ 'server.address': '127.0.0.1', 'http.response.status_code': 200 });
    expect(attributesOf(delivery!)['innsync.webhook.endpoint_id']).toEqual(expect.any(String));
    expect(collector.resources[0]).toMatchObject({ 'service.name': 'innsync' });

    const everything = JSON.stringify(collector.spans);
    for (const secret of ['Wilhelmina', 'Quixotestrand', 'wilhelmina.q@example.org', '+441632960123', '441632960123', key, key.slice(-16), slug + '/guests']) {
      expect(everything).not.toContain(secret);
    }
    if (engine === 'postgres') expect(spans.some((s) => s.parentSpanId === transaction!.spanId && 'db.query.text' in attributesOf(s))).toBe(true);

    // The operational log's line of this request names the trace and the request's span.
    const lines = serve
      .output()
      .stdout.split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.msg === 'request' && l.route === '/api/pms/v1/:slug/guests/checkin')).toMatchObject({
      trace_id: traceId,
      span_id: server!.spanId,
    });
  });

  it('a replay of the same Idempotency-Key is marked as one', async () => {
    const traceId = randomHex(16);
    const body = guest();
    expect((await checkIn(body, `00-${randomHex(16)}-${randomHex(8)}-01`, `trace-${engine}-2`)).status).toBe(200);
    expect((await checkIn(body, `00-${traceId}-${randomHex(8)}-01`, `trace-${engine}-2`)).status).toBe(200);
    const replay = (await spansOf(traceId, 'POST /api/pms/v1/:slug/guests/checkin')).find((s) => s.kind === SERVER);
    expect(attributesOf(replay!)).toMatchObject({ 'innsync.idempotent_replay': true, 'innsync.hotel': slug });
  });

  it("a sync's span carries its counts, as its answer's summary gives them", async () => {
    const traceId = randomHex(16);
    const answer = await post('/guests/sync', { syncMode: 'full', guests: [guest()] }, `00-${traceId}-${randomHex(8)}-01`, `trace-${engine}-3`);
    expect(answer.status).toBe(200);
    const summary = answer.body.summary as Record<string, number>;
    const sync = (await spansOf(traceId, 'roster.sync')).find((s) => s.name === 'roster.sync')!;
    expect(attributesOf(sync)).toMatchObject({
      'innsync.sync.received': 1,
      'innsync.sync.checked_in': 1,
      'innsync.sync.updated': summary.updated,
      'innsync.sync.checked_out': summary.checkedOut,
    });
    expect(summary.checkedOut).toBeGreaterThanOrEqual(2); // the guests of the tests before
  });
});

describe('an OTLP protocol the service does not send', () => {
  it('stops `serve` before it starts, with a line naming the variable and the protocols it takes', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-otlp-'));
    try {
      const env = { DATA_DIR: dataDir, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' };
      const result = await runCli(['serve'], { env });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('innsync: OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, not "grpc"\n');
      expect(fs.existsSync(path.join(dataDir, 'tls'))).toBe(false);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
