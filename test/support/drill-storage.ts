import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Db, type Engine } from '../../src/db/database.js';
import { insertUser } from '../../src/db/repositories/staff.repository.js';
import { startSession } from '../../src/dashboard/session.js';
import { newId, randomId } from '../../src/domain/ids.js';
import { createHotel, issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { throughPgBouncer } from './pgbouncer.js';
import { createDatabase } from './postgres-cluster.js';

/**
 * The storage a drill runs on: a fresh DATA_DIR, and for PostgreSQL a fresh database in
 * the given cluster. The drill keeps a handle of its own (`db`) to set up hotels and keys
 * and to check the results directly in the database, never through the service. The
 * service's first start creates the tables (so a drill can run another build's service,
 * DRILL_SERVER_BIN): use `db` only after starting an instance.
 */
export interface DrillStorage {
  engine: Engine;
  dataDir: string;
  /** The service's DATABASE_URL: through PgBouncer when the drill runs through it. */
  databaseUrl: string | null;
  /** The service's DATABASE_LISTEN_URL (the database's direct address) when databaseUrl leads through PgBouncer. */
  databaseListenUrl: string | null;
  db: Db;
  close(): Promise<void>;
}

/**
 * `pgBouncerPort`: the service reaches PostgreSQL through the PgBouncer on this port of
 * 127.0.0.1 (transaction mode, every database passed through: test/support/pgbouncer.ts), its
 * LISTEN session and the drill's own handle directly.
 */
export async function createStorage(engine: Engine, pgAdminUrl: string | null, pgBouncerPort: number | null = null): Promise<DrillStorage> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-drill-'));
  let direct: string | null = null;
  let pooled: string | null = null;
  if (engine === 'postgres') {
    if (!pgAdminUrl) throw new Error('a PostgreSQL drill needs a cluster');
    direct = await createDatabase(pgAdminUrl, 'innsync_drill');
    if (pgBouncerPort) pooled = throughPgBouncer(direct, pgBouncerPort);
  }
  const handle = openDatabase({ databaseUrl: direct, dataDir });
  return {
    engine,
    dataDir,
    databaseUrl: pooled ?? direct,
    databaseListenUrl: pooled ? direct : null,
    db: handle.db,
    async close() {
      await handle.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface DrillHotel {
  slug: string;
  id: string;
  pairs: IssuedKeyPair[];
}

/** A hotel with `pairs` key pairs (rate limits count per key: more keys, more load). */
export async function addHotel(db: Db, pairs = 1): Promise<DrillHotel> {
  const slug = `drill-${randomId(10)}`;
  const hotel = await createHotel(db, slug, `Drill ${slug}`);
  const issued: IssuedKeyPair[] = [];
  for (let i = 0; i < pairs; i++) issued.push(await issueKeyPair(db, slug));
  return { slug, id: hotel.id, pairs: issued };
}

/** A staff session of the hotel, as a login makes one: the cookie value for the dashboard's event stream. */
export async function staffSessionCookie(db: Db, hotelId: string): Promise<string> {
  const user = await insertUser(db, {
    id: newId('user'),
    hotelId,
    email: `${randomId(10)}@drill.example`,
    role: 'receptionist',
    passwordHash: 'not-for-login',
    now: new Date().toISOString(),
  });
  const { token } = await startSession(db, { id: user.id, hotelId });
  return token;
}

/**
 * The roster's invariants, checked in the database: one active guest per room, one
 * active stay per pmsGuestId, every active guest with exactly one active room
 * assignment in the room it names, none for a checked-out guest, and every committed
 * idempotency record holding its response. Returns one line per violation.
 */
export async function invariantViolations(db: Db): Promise<string[]> {
  const out: string[] = [];
  const rooms = await sql<{ hotel_id: string; room_number: string; n: number }>`
    select hotel_id, room_number, count(*) as n from room_assignments where released_at is null group by hotel_id, room_number having count(*) > 1`.execute(db);
  for (const r of rooms.rows) out.push(`room ${r.room_number} of ${r.hotel_id} held by ${r.n} active guests`);
  const stays = await sql<{ hotel_id: string; pms_guest_id: string; n: number }>`
    select hotel_id, pms_guest_id, count(*) as n from guests where status = 'active' and pms_guest_id is not null group by hotel_id, pms_guest_id having count(*) > 1`.execute(
    db,
  );
  for (const r of stays.rows) out.push(`pmsGuestId ${r.pms_guest_id} of ${r.hotel_id} has ${r.n} active stays`);
  const assignments = await sql<{ id: string; status: string; room_number: string; active: number; matching: number }>`
    select g.id, g.status, g.room_number,
      (select count(*) from room_assignments a where a.guest_id = g.id and a.released_at is null) as active,
      (select count(*) from room_assignments a where a.guest_id = g.id and a.released_at is null and a.room_number = g.room_number) as matching
    from guests g`.execute(db);
  for (const r of assignments.rows) {
    const expected = r.status === 'active' ? 1 : 0;
    if (Number(r.active) !== expected || Number(r.matching) !== expected) {
      out.push(`guest ${r.id} (${r.status}, room ${r.room_number}) has ${Number(r.active)} active room assignments, ${Number(r.matching)} in its room`);
    }
  }
  const records = await sql<{ n: number }>`select count(*) as n from idempotency_records where response_body is null`.execute(db);
  const open = Number(records.rows[0]?.n ?? 0);
  if (open > 0) out.push(`${open} committed idempotency records without a response`);
  return out;
}

/** SQLite's own check of the database file ("ok" when sound), on a connection of its own. */
export async function sqliteIntegrity(dataDir: string): Promise<string> {
  const handle = openDatabase({ databaseUrl: null, dataDir });
  try {
    const res = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(handle.db);
    return res.rows.map((r) => r.integrity_check).join('; ');
  } finally {
    await handle.close();
  }
}
