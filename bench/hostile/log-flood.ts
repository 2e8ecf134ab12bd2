/**
 * Request-log flood: what requests without a valid key cost the disk. One HTTP/2
 * connection from one address keeps `--streams` streams (50) open for `--seconds` (30),
 * each a `GET /api/pms/v1/<slug>/guests?x=<19 KB>` with a 19 KB `User-Agent`, a 19 KB
 * `Idempotency-Key` and a wrong Bearer key: the service answers 401, then 429 once the
 * address's per-IP limit is used up. Every answer used to leave a row of ~58 KB in the
 * request log (kept 90 days); the request log now keeps those fields capped, and at most a
 * few rows a minute of requests no valid key sent per address (README.md, "Logs").
 *
 * Reported: the answers by status and their rate, the rows written, the growth of the data
 * (SQLite: every file in DATA_DIR; PostgreSQL: the database and DATA_DIR), bytes per
 * request, and the ratio of the growth to the header text the attacker sent (the baseline,
 * measured in the same run). Target: the data grows by less than 5 MB; exit status 1 when
 * missed, 2 when the run failed.
 *
 *   npm run bench:log-flood
 *   node dist/bench/hostile/log-flood.js --seconds 10 --engine postgres --json
 *
 * Options: --seconds N (30), --streams N (50), --field-kb N (19: the size of the query,
 * the User-Agent and the Idempotency-Key each), --engine sqlite|postgres (sqlite;
 * postgres in a throwaway cluster, PG_BIN), --json (one JSON object on stdout).
 */
import fs from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { Engine } from '../../src/db/database.js';
import { startPostgresCluster, type PostgresCluster } from '../../test/support/postgres-cluster.js';
import { Instance, sleep } from '../../test/support/drill-instance.js';
import { round } from '../../test/support/drill-report.js';
import { addHotel, createStorage, type DrillStorage } from '../../test/support/drill-storage.js';

const MB = 1024 * 1024;
const TARGET_BYTES = 5 * MB;

interface Options {
  seconds: number;
  streams: number;
  fieldKb: number;
  engine: Engine;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '30' },
      streams: { type: 'string', default: '50' },
      'field-kb': { type: 'string', default: '19' },
      engine: { type: 'string', default: 'sqlite' },
      json: { type: 'boolean', default: false },
    },
  });
  const positive = (name: string, v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
    return n;
  };
  if (values.engine !== 'sqlite' && values.engine !== 'postgres') throw new Error('--engine must be sqlite or postgres');
  return {
    seconds: positive('seconds', values.seconds),
    streams: positive('streams', values.streams),
    fieldKb: positive('field-kb', values['field-kb']),
    engine: values.engine,
    json: values.json,
  };
}

function dirBytes(dir: string): number {
  let sum = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    sum += e.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return sum;
}

/** The data the service keeps: DATA_DIR, and PostgreSQL's database. */
async function dataBytes(storage: DrillStorage): Promise<number> {
  const dir = dirBytes(storage.dataDir);
  if (storage.engine === 'sqlite') return dir;
  const { rows } = await sql<{ size: string }>`select pg_database_size(current_database()) as size`.execute(storage.db);
  return dir + Number(rows[0]?.size ?? 0);
}

async function unattributedRows(storage: DrillStorage): Promise<Record<string, number>> {
  const rows = await storage.db
    .selectFrom('request_log')
    .select(['status_code', (eb) => eb.fn.countAll<number>().as('n')])
    .where('hotel_id', 'is', null)
    .groupBy('status_code')
    .execute();
  return Object.fromEntries(rows.map((r) => [String(r.status_code), Number(r.n)]));
}

/** The flood: `streams` streams at a time on one connection until `until`; the answers by status. */
async function flood(baseUrl: string, slug: string, o: Options, until: number): Promise<{ answers: Record<string, number>; sentBytes: number }> {
  const field = 'x'.repeat(o.fieldKb * 1024);
  const session = http2.connect(baseUrl, { rejectUnauthorized: false, servername: 'localhost' });
  session.on('error', () => undefined);
  const answers: Record<string, number> = {};
  let n = 0;
  let sentBytes = 0;
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const i = n++;
      const headers = {
        ':method': 'GET',
        ':path': `/api/pms/v1/${slug}/guests?x=${field}${i}`,
        'user-agent': `${field}${i}`,
        'idempotency-key': `${field}${i}`,
        authorization: 'Bearer not-a-key',
      };
      sentBytes += 3 * field.length;
      const stream = session.request(headers, { endStream: true });
      let status = 'error';
      stream.on('response', (h) => (status = String(h[':status'])));
      stream.resume();
      stream.on('close', () => {
        answers[status] = (answers[status] ?? 0) + 1;
        resolve();
      });
    });
  const worker = async (): Promise<void> => {
    while (performance.now() < until && !session.destroyed) await one();
  };
  await Promise.all(Array.from({ length: o.streams }, worker));
  session.close();
  return { answers, sentBytes };
}

async function main(): Promise<number> {
  const o = parseOptions(process.argv.slice(2));
  const say = (line: string) => (o.json ? process.stderr.write(`${line}\n`) : console.log(line));
  let cluster: PostgresCluster | null = null;
  let storage: DrillStorage | null = null;
  let instance: Instance | null = null;
  try {
    if (o.engine === 'postgres') cluster = await startPostgresCluster();
    storage = await createStorage(o.engine, cluster?.adminUrl ?? null);
    instance = await Instance.start({ label: 'server', dataDir: storage.dataDir, databaseUrl: storage.databaseUrl });
    const hotel = await addHotel(storage.db);
    await sleep(500);
    const before = await dataBytes(storage);
    say(
      `innsync on ${o.engine}, port ${instance.port}: ${o.streams} HTTP/2 streams for ${o.seconds} s, ${o.fieldKb} KB query, User-Agent and Idempotency-Key, a wrong key`,
    );
    const started = performance.now();
    const { answers, sentBytes } = await flood(instance.baseUrl, hotel.slug, o, started + o.seconds * 1000);
    const elapsed = (performance.now() - started) / 1000;
    await sleep(1_000); // the request log's last batches
    const after = await dataBytes(storage);
    const rows = await unattributedRows(storage);
    const requests = Object.values(answers).reduce((a, b) => a + b, 0);
    const growth = after - before;
    const report = {
      engine: o.engine,
      seconds: round(elapsed, 1),
      requests,
      requestsPerSecond: round(requests / elapsed, 0),
      answers,
      rowsWritten: rows,
      headerTextSentMB: round(sentBytes / MB, 1),
      dataBeforeMB: round(before / MB, 2),
      dataAfterMB: round(after / MB, 2),
      growthMB: round(growth / MB, 2),
      growthBytesPerRequest: round(growth / Math.max(1, requests), 1),
      growthToSentRatio: round(growth / Math.max(1, sentBytes), 5),
      targetMB: TARGET_BYTES / MB,
      met: growth < TARGET_BYTES,
      serverAlive: instance.alive,
    };
    if (o.json) console.log(JSON.stringify(report));
    else {
      say(
        `answers: ${Object.entries(answers)
          .map(([s, c]) => `${c} × ${s}`)
          .join(', ')} (${report.requestsPerSecond}/s)`,
      );
      say(
        `request-log rows without a valid key: ${
          Object.entries(rows)
            .map(([s, c]) => `${c} × ${s}`)
            .join(', ') || 'none'
        }`,
      );
      say(`data: ${report.dataBeforeMB} MB -> ${report.dataAfterMB} MB, grew ${report.growthMB} MB (${report.growthBytesPerRequest} bytes a request)`);
      say(`header text sent: ${report.headerTextSentMB} MB; growth / sent: ${report.growthToSentRatio} (a row per request with its text whole: about 1)`);
      say(`target: growth under ${report.targetMB} MB: ${report.met ? 'met' : 'MISSED'}`);
    }
    return report.met && report.serverAlive ? 0 : 1;
  } finally {
    await instance?.stop();
    await storage?.close();
    cluster?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
