/**
 * The storage floor of a live check-in on SQLite: the rows one check-in writes (its
 * idempotency claim, the guest, the room assignment, the activity entry, the stored
 * answer), written with raw prepared statements on the service's own schema, in this one
 * thread, with nothing else: no HTTP, no Kysely. Printed per variant: CPU µs and WAL
 * bytes per check-in, so the pipeline's own overhead is what the check-in bench measures
 * above these. The variants "+ request log" also write, in the same commit, what the
 * request log keeps of the check-in (docs/architecture.md, "Request log storage"): its
 * row, its two bodies compressed and addressed by their SHA-256, and the guest keys they
 * name, with the service's own functions for the compression and the keys.
 *
 *   npm run bench:floor
 *
 * Variants: ids random (the earlier build's) or time-ordered (domain/ids.ts newId); each
 * check-in a transaction of its own, or GROUP check-ins sharing one commit, each in a
 * savepoint (as the service's group commit runs them, docs/architecture.md, "SQLite:
 * group commit"). Knobs: BENCH_FLOOR_CHECKINS (5,000 measured per variant, after 2,000 of
 * warm-up), BENCH_FLOOR_GROUPS (`1,4,10`), SQLITE_SYNCHRONOUS (`normal`; `full` syncs the
 * WAL at every commit).
 *
 * WAL bytes: the WAL is emptied after the warm-up (`wal_checkpoint(TRUNCATE)`) and a read
 * transaction of a second connection then holds its snapshot, so no checkpoint copies and
 * no writer resets it: its size at the end is every frame written.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrations.js';
import { newId, randomId } from '../src/domain/ids.js';
import { bodyAddress, packBody } from '../src/pms/request-log-body.js';
import { guestKeys, guestRefs } from '../src/pms/request-log-guests.js';

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number(raw);
}

type IdStyle = 'random' | 'time-ordered';

const makeId = (style: IdStyle, prefix: string): string => (style === 'random' ? `${prefix}_${randomId(20)}` : newId(prefix));

interface Result {
  ids: IdStyle;
  requestLog: boolean;
  group: number;
  cpuMicros: number;
  walBytes: number;
  checkinsPerSecond: number;
}

async function migratedDatabase(dir: string): Promise<string> {
  const handle = openDatabase({ databaseUrl: null, dataDir: dir, sqliteReader: false });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  return path.join(dir, 'innsync.sqlite');
}

async function runVariant(ids: IdStyle, group: number, warm: number, measured: number, synchronous: string, requestLog = false): Promise<Result> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-floor-'));
  try {
    const file = await migratedDatabase(dir);
    const db = new SqliteDatabase(file);
    for (const p of ['journal_mode = WAL', `synchronous = ${synchronous}`, 'foreign_keys = ON', 'secure_delete = ON', 'wal_autocheckpoint = 0']) db.pragma(p);
    const now = new Date().toISOString();
    const hotelId = makeId(ids, 'hotel');
    db.prepare('insert into hotels (id, slug, name, created_at, time_zone) values (?, ?, ?, ?, ?)').run(hotelId, `floor-${randomId(6)}`, 'Floor', now, 'UTC');
    const keyId = makeId(ids, 'key');

    const claim = db.prepare('insert into idempotency_records (api_key_id, idempotency_key, fingerprint, created_at, expires_at) values (?, ?, ?, ?, ?)');
    const insertGuest = db.prepare(
      `insert into guests (id, hotel_id, source, pms_guest_id, status, first_name, last_name, language, adults, check_in_date, check_out_date, room_number, created_at, updated_at)
       values (?, ?, 'pms', ?, 'active', 'Ada', 'Lovelace', 'en', 2, '2026-11-23', '2026-11-26', ?, ?, ?)`,
    );
    const insertRoom = db.prepare('insert into room_assignments (id, hotel_id, guest_id, room_number, assigned_at, released_at) values (?, ?, ?, ?, ?, null)');
    const insertActivity = db.prepare(
      "insert into activity_log (id, hotel_id, created_at, actor_type, actor_id, actor_mode, action, guest_id, pms_guest_id, changes) values (?, ?, ?, 'pms', ?, 'live', 'guest.checked_in', ?, ?, null)",
    );
    const storeAnswer = db.prepare('update idempotency_records set status_code = 200, response_body = ? where api_key_id = ? and idempotency_key = ?');
    const logRow = db.prepare(
      `insert into request_log (id, created_at, hotel_id, slug, api_key_id, key_mode, method, path, status_code, request_sha256, response_sha256, request_bytes, response_bytes, client_ip, user_agent, duration_ms, idempotency_key)
       values (?, ?, ?, 'floor', ?, 'live', 'POST', '/api/pms/v1/floor/guests/checkin', 200, ?, ?, ?, ?, '127.0.0.1', 'floor', 1.5, ?)`,
    );
    const logBody = db.prepare(
      'insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at) values (?, ?, ?, ?, ?) on conflict (hotel_id, sha256) do update set last_used_at = excluded.last_used_at',
    );
    const logGuestKey = db.prepare('insert into request_log_guest_keys (key, hotel_id, sha256) values (?, ?, ?) on conflict do nothing');
    const storeBody = (text: string, at: string): string => {
      const sha256 = bodyAddress(text);
      const packed = packBody(text);
      logBody.run(hotelId, sha256, packed.bytes, packed.data, at);
      for (const key of guestKeys(hotelId, guestRefs([text]))) logGuestKey.run(key, hotelId, sha256);
      return sha256;
    };
    const begin = db.prepare('begin immediate');
    const commit = db.prepare('commit');
    const savepoint = db.prepare('savepoint member');
    const release = db.prepare('release member');

    let n = 0;
    const checkIn = (): void => {
      const i = ++n;
      const at = new Date().toISOString();
      const pmsGuestId = `G-${String(i).padStart(8, '0')}`;
      const room = `R${String(i).padStart(8, '0')}`;
      const idem = `checkin-${i}`;
      claim.run(keyId, idem, 'f'.repeat(64), at, at);
      const guestId = makeId(ids, 'guest');
      insertGuest.run(guestId, hotelId, pmsGuestId, room, at, at);
      insertRoom.run(makeId(ids, 'room'), hotelId, guestId, room, at);
      insertActivity.run(makeId(ids, 'act'), hotelId, at, keyId, guestId, pmsGuestId);
      const answer = JSON.stringify({ status: 'created', guestId, pmsGuestId, roomNumber: room, requestId: makeId(ids, 'req') });
      storeAnswer.run(answer, keyId, idem);
      if (!requestLog) return;
      const request = JSON.stringify({
        pmsGuestId,
        firstName: 'Ada',
        lastName: 'Lovelace',
        roomNumber: room,
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-26',
        language: 'en',
        adults: 2,
      });
      logRow.run(makeId(ids, 'req'), at, hotelId, keyId, storeBody(request, at), storeBody(answer, at), request.length, answer.length, idem);
    };
    const batch = (count: number): void => {
      for (let done = 0; done < count; done += group) {
        begin.run();
        const members = Math.min(group, count - done);
        for (let m = 0; m < members; m++) {
          if (group > 1) savepoint.run();
          checkIn();
          if (group > 1) release.run();
        }
        commit.run();
      }
    };

    batch(warm);
    const pin = new SqliteDatabase(file);
    pin.pragma('wal_checkpoint(TRUNCATE)');
    pin.exec('begin');
    pin.prepare('select count(*) from hotels').get();
    const cpu = process.cpuUsage();
    const started = performance.now();
    batch(measured);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const walBytes = Math.max(0, fs.statSync(`${file}-wal`).size - 32);
    pin.exec('rollback');
    pin.close();
    db.close();
    return { ids, requestLog, group, cpuMicros: (used.user + used.system) / measured, walBytes: walBytes / measured, checkinsPerSecond: measured / seconds };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const label = (r: Result): string => (r.requestLog ? `${r.ids} + request log` : r.ids);

async function main(): Promise<void> {
  const measured = intEnv('BENCH_FLOOR_CHECKINS', 5000);
  const groups = (process.env.BENCH_FLOOR_GROUPS ?? '1,4,10').split(',').map(Number);
  const synchronous = (process.env.SQLITE_SYNCHRONOUS ?? 'normal').toUpperCase();
  console.log(
    `innsync storage floor (SQLite, synchronous ${synchronous}), ${new Date().toISOString()}, node ${process.version}, ${measured} check-ins per variant`,
  );
  console.log('');
  console.log(
    `${'ids'.padEnd(30)}${'per commit'.padStart(11)}${'check-ins/s'.padStart(13)}${'CPU µs/check-in'.padStart(17)}${'WAL bytes/check-in'.padStart(20)}`,
  );
  const results: Result[] = [];
  const variants = [
    ['random', false],
    ['time-ordered', false],
    ['time-ordered', true],
  ] as const;
  for (const group of groups) {
    for (const [ids, requestLog] of variants) {
      const r = await runVariant(ids, group, 2000, measured, synchronous, requestLog);
      results.push(r);
      console.log(
        `${label(r).padEnd(30)}${String(group).padStart(11)}${Math.round(r.checkinsPerSecond).toLocaleString('en-US').padStart(13)}${Math.round(r.cpuMicros).toLocaleString('en-US').padStart(17)}${Math.round(r.walBytes).toLocaleString('en-US').padStart(20)}`,
      );
    }
  }
  const base = results.find((r) => r.ids === 'random' && r.group === 1 && !r.requestLog);
  if (base) {
    console.log('');
    for (const r of results) {
      console.log(
        `${label(r)}, ${r.group} per commit ÷ random, 1 per commit: CPU ${(r.cpuMicros / base.cpuMicros).toFixed(2)}×, WAL bytes ${(r.walBytes / base.walBytes).toFixed(2)}×`,
      );
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
