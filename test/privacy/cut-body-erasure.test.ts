import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { brotliDecompressSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteFile } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { parseJsonOutput, runCli, storageEnv } from '../cli/cli-helpers.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer, directDatabaseUrl } from '../support/harness.js';
import { loggedRows } from '../support/request-log.js';

// A request-log body over 64 KiB keeps its first 64 KiB (README.md, Personal data). Erasure finds
// a body's guests by the ids it names, so a cut that falls inside a guest before its
// pmsGuestId must not keep that guest's name, and a cut sync answer must lose an erased
// guest's values even where they stand beside nested changes. Through HTTPS and the
// `innsync guest erase` command, on both engines; the stored bodies are read back
// (decompressed) and the raw storage is searched.

const CAP = 64 * 1024;
const PG_DUMP = '/usr/lib/postgresql/15/bin/pg_dump';
const run = promisify(execFile);
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Every byte the service keeps: SQLite's database and WAL files, or a pg_dump of the database. */
async function storedText(t: TestServer): Promise<string> {
  if (t.engine === 'postgres') {
    const { stdout } = await run(PG_DUMP, ['--data-only', directDatabaseUrl(t.config)], { maxBuffer: 512 * 1024 * 1024 });
    return stdout;
  }
  const file = sqliteFile(t.config.dataDir);
  return [file, `${file}-wal`]
    .filter((f) => fs.existsSync(f))
    .map((f) => fs.readFileSync(f).toString('latin1'))
    .join('\n');
}

describe.each(testEngines())('erasure of a guest in a body cut at 64 KiB (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let hotelId: string;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    hotelId = (await t.server.database.db.selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;
  }, 60_000);
  afterAll(() => t?.close());

  /** Every stored body of the hotel, decompressed. */
  async function storedBodies(): Promise<string[]> {
    const { rows } = await sql<{ body: Uint8Array }>`select body from request_log_bodies where hotel_id = ${hotelId}`.execute(t.server.database.db);
    return rows.map((r) => brotliDecompressSync(r.body).toString('utf8'));
  }

  it('a guest whose pmsGuestId comes after the cut of a sync body, and whose update is in a cut sync answer, leaves no trace of its name, phone or e-mail once erased', async () => {
    const tag = randomId(8);
    const filler = (i: number) => guest({ lastName: `Filler${tag}x${i}`, roomNumber: `F${tag}${i}` });
    const before = Array.from({ length: 450 }, (_, i) => filler(i));
    const after = Array.from({ length: 150 }, (_, i) => filler(450 + i));
    // The PMS writes its members in an order of its own: pmsGuestId last.
    const target = {
      lastName: `Quintessa${randomId(10)}`,
      firstName: `Ottoline${randomId(10)}`,
      phone: `+4930${Math.floor(Math.random() * 9e8 + 1e8)}`,
      email: `q.${randomId(10).toLowerCase()}@example.org`,
      language: 'de',
      nationality: 'DE',
      roomNumber: `T${tag}`,
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-26',
      pmsGuestId: `PMS-cut-${randomId(10)}`,
    };
    // Where in the target's object the 64 KiB cut falls: after its e-mail, before its pmsGuestId.
    const inside = JSON.stringify(target).indexOf(',"language"');
    let m = before.length;
    let sent = '';
    for (; m > 0; m--) {
      const unpadded = JSON.stringify({ syncMode: 'full', guests: [...before.slice(0, m), target, ...before.slice(m), ...after] });
      const at = unpadded.indexOf(JSON.stringify(target)) + inside;
      if (at <= CAP) {
        // JSON allows white space between tokens: pad so that byte 65,536 is exactly there.
        sent = `{${' '.repeat(CAP - at)}${unpadded.slice(1)}`;
        break;
      }
    }
    expect(bytes(sent)).toBeGreaterThan(CAP);
    expect(sent.slice(0, CAP).endsWith(`"email":"${target.email}"`)).toBe(true);

    const first = await t.api('POST', `${base}/guests/sync`, {
      rawBody: sent,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: uniqueKey('cut'),
    });
    expect(first.status, first.text.slice(0, 300)).toBe(200);
    expect(first.body.summary.checkedIn).toBe(601);

    // Every guest's name changes (the target's too): the answer lists 601 updates with their changes, over 64 KiB.
    const renamed = (g: Record<string, unknown>) => ({ ...g, lastName: `${String(g.lastName)}-Neu` });
    const second = await t.api('POST', `${base}/guests/sync`, {
      body: { syncMode: 'full', guests: [renamed(target), ...before.map(renamed), ...after.map(renamed)] },
      idempotencyKey: uniqueKey('cut'),
    });
    expect(second.status, second.text.slice(0, 300)).toBe(200);
    expect(second.body.summary.updated).toBe(601);
    expect(bytes(second.text)).toBeGreaterThan(CAP);
    expect(second.text.indexOf(`${target.lastName}-Neu`)).toBeLessThan(CAP / 2);

    const out = await t.post(`${base}/guests/checkout`, { pmsGuestId: target.pmsGuestId });
    expect(out.status).toBe(200);
    const rows = await loggedRows(t.server.database.db, [first.body.requestId as string, second.body.requestId as string, out.body.requestId as string]);
    // Both bodies were cut; the target's values are in them before the erasure.
    const firstRow = rows.get(first.body.requestId as string);
    const secondRow = rows.get(second.body.requestId as string);
    expect(firstRow?.request_body).toMatch(/\n…\[cut: \d+ bytes in all, sha256 [0-9a-f]{64}\]$/);
    expect(secondRow?.response_body).toMatch(/\n…\[cut: \d+ bytes in all, sha256 [0-9a-f]{64}\]$/);
    expect(secondRow?.response_body).toContain(`${target.lastName}-Neu`);

    const values = [target.lastName, target.firstName, target.phone, target.email];
    const erase = await runCli(['guest', 'erase', t.slug, '--pms-guest-id', target.pmsGuestId, '--json'], {
      env: storageEnv(t.config),
    });
    expect(parseJsonOutput(erase).erased.guests).toBe(1);

    // No stored body holds anything of the erased guest; the raw storage neither.
    const bodies = await storedBodies();
    const left = bodies.flatMap((b) => values.filter((v) => b.includes(v)));
    expect(left).toEqual([]);
    const raw = await storedText(t);
    for (const v of values) expect(raw).not.toContain(v);
    // Other guests of the same bodies keep their names.
    expect(bodies.some((b) => b.includes(`"Filler${tag}x0"`))).toBe(true);
    expect(bodies.some((b) => b.includes(`"Filler${tag}x0-Neu"`))).toBe(true);
  }, 180_000);
});
