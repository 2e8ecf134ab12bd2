import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import type { IssuedKeyPair } from '../../src/operations.js';
import { describeAnswer, isReplay, pmsPost, type Answer } from '../support/drill-http.js';
import { sleep } from '../support/drill-instance.js';
import type { DrillHotel } from '../support/drill-storage.js';

// Mixed load with a client-side ledger. Each worker owns one hotel and sends one request
// at a time (check-ins, room moves, renames, check-outs), so the hotel's expected roster
// is known exactly: a model updated with every settled operation. An operation is sent
// with its own Idempotency-Key until it gets a 2xx; when a request goes unanswered (the
// process was killed, the database is down) it is sent again with the same key and body,
// as a PMS retries. At the end the database must hold exactly the model: every change
// applied once, none lost, none twice.

type Endpoint = 'checkin' | 'update' | 'checkout';
type OpKind = 'checkin' | 'move' | 'rename' | 'checkout';

export interface Op {
  kind: OpKind;
  endpoint: Endpoint;
  pmsGuestId: string;
  body: Record<string, unknown>;
  key: string;
  /** The live key it is sent with: its Idempotency-Key is scoped to this key. */
  apiKey: string;
  /** What the 2xx answer must say. */
  expect: { room?: string; changes?: Record<string, { from: unknown; to: unknown }> };
  /** Every answer it got, in order. */
  answers: Answer[];
}

interface ActiveGuest {
  room: string;
  firstName: string;
}

export interface LoadStats {
  sent: number;
  /** Operations settled with a 2xx. */
  acknowledged: number;
  replays: number;
  unanswered: number;
  byStatus: Record<string, number>;
  /** Answers that no correct service gives (a 500, a fresh 200 that changed nothing, a 404 for a guest in house…). */
  violations: string[];
}

/** Answers with their own request id (not replays, which carry the original's): each must have a request-log row. */
export interface AnsweredRequest {
  requestId: string;
  receivedAt: number;
}

const PATHS: Record<Endpoint, string> = { checkin: '/guests/checkin', update: '/guests/update', checkout: '/guests/checkout' };
/**
 * docs/pms-interface.md, "Rate limits": 60 requests a minute per key on each of these
 * endpoints; first attempts use at most this many, leaving the rest for retries and the
 * replay check.
 */
const FIRST_ATTEMPTS_PER_MINUTE = 40;

/** Where the next request goes: the drill moves it when it restarts an instance. */
export interface LoadTarget {
  baseUrl(): string;
}

export class HotelWorker {
  readonly model = new Map<string, ActiveGuest>();
  readonly ops: Op[] = [];
  readonly answered: AnsweredRequest[] = [];
  private seq = 0;
  private readonly windows = new Map<string, { window: number; count: number }>();

  constructor(
    readonly hotel: DrillHotel,
    private readonly target: LoadTarget,
    private readonly stats: LoadStats,
    private readonly opts: { retryPauseMs: number; pauseBetweenMs: number; opsPerSecond?: number } = { retryPauseMs: 100, pauseBetweenMs: 0 },
  ) {}

  /** Sends operations one at a time until `stop()` says so; the last one is always settled. */
  async run(stop: () => boolean): Promise<void> {
    const began = Date.now();
    let n = 0;
    while (!stop()) {
      // At a steady rate when one is set: the next operation starts at its slot, not sooner.
      if (this.opts.opsPerSecond) {
        const slot = began + (n * 1000) / this.opts.opsPerSecond + Math.random() * (1000 / this.opts.opsPerSecond);
        if (slot > Date.now()) await sleep(slot - Date.now());
        if (stop()) break;
      }
      const op = this.nextOp();
      if (!op) {
        await sleep(200);
        continue;
      }
      n += 1;
      await this.settle(op);
      if (this.opts.pauseBetweenMs > 0) await sleep(this.opts.pauseBetweenMs);
    }
  }

  /** The next operation, chosen against the model; null while every key is at its limit. */
  private nextOp(): Op | null {
    const active = [...this.model.entries()];
    const roll = Math.random();
    let kind: OpKind = 'checkin';
    if (active.length >= 5) kind = roll < 0.35 ? 'checkin' : roll < 0.65 ? 'move' : roll < 0.8 ? 'rename' : 'checkout';
    const endpoint: Endpoint = kind === 'checkin' ? 'checkin' : kind === 'checkout' ? 'checkout' : 'update';
    const pair = this.pairWithBudget(endpoint);
    if (!pair) return null;
    const n = ++this.seq;
    const key = `${kind}_${this.hotel.slug}_${n}_${randomId(6)}`;
    const base = { endpoint, key, apiKey: pair.live, answers: [] as Answer[] };
    const pick = active[Math.floor(Math.random() * active.length)];
    if (kind === 'checkin' || !pick) {
      const pmsGuestId = `P${n}`;
      const room = `R${n}`;
      return {
        ...base,
        kind: 'checkin',
        endpoint: 'checkin',
        pmsGuestId,
        body: { pmsGuestId, lastName: `Guest ${n}`, firstName: `F${n}`, roomNumber: room, checkInDate: '2026-11-23', checkOutDate: '2026-11-27' },
        expect: { room },
      };
    }
    const [pmsGuestId, guest] = pick;
    if (kind === 'move') {
      const room = `R${n}`;
      return { ...base, kind, pmsGuestId, body: { pmsGuestId, roomNumber: room }, expect: { changes: { roomNumber: { from: guest.room, to: room } } } };
    }
    if (kind === 'rename') {
      const firstName = `F${n}`;
      return { ...base, kind, pmsGuestId, body: { pmsGuestId, firstName }, expect: { changes: { firstName: { from: guest.firstName, to: firstName } } } };
    }
    return { ...base, kind, pmsGuestId, body: { pmsGuestId }, expect: { room: guest.room } };
  }

  /** A key pair with requests left in this minute's window on `endpoint` (counted here as the server counts), counted as used. */
  private pairWithBudget(endpoint: Endpoint): IssuedKeyPair | null {
    const pair = this.hotel.pairs.find((p) => this.used(p.live, endpoint) < FIRST_ATTEMPTS_PER_MINUTE);
    if (pair) this.count(pair.live, endpoint);
    return pair ?? null;
  }

  /** Requests sent with `apiKey` to `endpoint` in the current minute's window. */
  private used(apiKey: string, endpoint: Endpoint): number {
    const w = this.windows.get(`${apiKey}|${endpoint}`);
    return w && w.window === Math.floor(Date.now() / 60_000) ? w.count : 0;
  }

  private count(apiKey: string, endpoint: Endpoint): void {
    this.windows.set(`${apiKey}|${endpoint}`, { window: Math.floor(Date.now() / 60_000), count: this.used(apiKey, endpoint) + 1 });
  }

  /** Sends `op` (again, with the same key) until it has a 2xx, then checks the answer and applies it to the model. */
  private async settle(op: Op): Promise<void> {
    this.ops.push(op);
    const giveUpAt = Date.now() + 120_000;
    for (let attempt = 0; ; attempt++) {
      if (Date.now() > giveUpAt) {
        this.stats.violations.push(
          `${this.hotel.slug} ${op.kind} ${op.pmsGuestId} (key ${op.key}): no 2xx within 120 s (${op.answers.length} attempts, last ${describeAnswer(op.answers[op.answers.length - 1] as Answer)})`,
        );
        return;
      }
      if (attempt > 0) this.count(op.apiKey, op.endpoint);
      const a = await pmsPost(this.target.baseUrl(), this.hotel.slug, PATHS[op.endpoint], op.apiKey, op.key, op.body);
      op.answers.push(a);
      this.stats.sent += 1;
      const label = a.status === 0 ? 'no answer' : String(a.status);
      this.stats.byStatus[label] = (this.stats.byStatus[label] ?? 0) + 1;
      if (a.status !== 0 && !isReplay(a) && typeof a.body?.requestId === 'string')
        this.answered.push({ requestId: a.body.requestId as string, receivedAt: a.receivedAt });
      if (a.status === 0) {
        this.stats.unanswered += 1;
        await sleep(this.opts.retryPauseMs);
        continue;
      }
      if (a.status === 429) {
        await sleep((Number(a.body?.retryAfter ?? 1) || 1) * 1000);
        continue;
      }
      if (a.status === 503 || (a.status === 409 && a.body?.code === 'IDEMPOTENCY_KEY_IN_USE')) {
        await sleep(this.opts.retryPauseMs);
        continue;
      }
      if (a.status !== 200) {
        this.violation(op, a, `answered ${describeAnswer(a)}`);
        return;
      }
      this.stats.acknowledged += 1;
      if (isReplay(a)) this.stats.replays += 1;
      this.apply(op, a);
      return;
    }
  }

  private violation(op: Op, a: Answer, what: string): void {
    this.stats.violations.push(
      `${this.hotel.slug} ${op.kind} ${op.pmsGuestId} (key ${op.key}, attempt ${op.answers.length}): ${what}: ${JSON.stringify(a.body).slice(0, 300)}`,
    );
  }

  /** A 2xx must say what the model expects; a fresh one that changed nothing means the operation ran twice. */
  private apply(op: Op, a: Answer): void {
    const body = a.body as Record<string, unknown>;
    if (op.kind === 'checkin') {
      if (body.status !== 'created' || body.roomNumber !== op.expect.room) this.violation(op, a, 'check-in answer differs from the model');
      this.model.set(op.pmsGuestId, { room: String(op.expect.room), firstName: String(op.body.firstName) });
      return;
    }
    if (op.kind === 'checkout') {
      if (body.status !== 'checked_out' || body.roomNumber !== op.expect.room) this.violation(op, a, 'check-out answer differs from the model');
      this.model.delete(op.pmsGuestId);
      return;
    }
    if (JSON.stringify(body.changes) !== JSON.stringify(op.expect.changes)) {
      this.violation(
        op,
        a,
        Object.keys((body.changes as object | undefined) ?? {}).length === 0
          ? 'processed twice (a fresh 200 that changed nothing)'
          : 'update answer differs from the model',
      );
    }
    const guest = this.model.get(op.pmsGuestId);
    if (!guest) return;
    if (op.kind === 'move') guest.room = String(op.body.roomNumber);
    else guest.firstName = String(op.body.firstName);
  }

  /** Settled operations: each made exactly one activity entry. */
  get settled(): number {
    return this.ops.filter((op) => op.answers.some((a) => a.status === 200)).length;
  }
}

export function newLoadStats(): LoadStats {
  return { sent: 0, acknowledged: 0, replays: 0, unanswered: 0, byStatus: {}, violations: [] };
}

/**
 * The database against the workers' models: each hotel's active guests (pmsGuestId,
 * room, first name) equal the model, and its activity log holds one entry per settled
 * operation (more: processed twice; fewer: an acknowledged change lost).
 */
export async function compareWithModels(db: Db, workers: HotelWorker[]): Promise<{ lost: number; doubled: number; lines: string[] }> {
  let lost = 0;
  let doubled = 0;
  const lines: string[] = [];
  for (const w of workers) {
    const rows = await db
      .selectFrom('guests')
      .select(['pms_guest_id', 'room_number', 'first_name'])
      .where('hotel_id', '=', w.hotel.id)
      .where('status', '=', 'active')
      .execute();
    const actual = new Map(rows.map((r) => [r.pms_guest_id ?? '', { room: r.room_number, firstName: r.first_name ?? '' }]));
    for (const [pmsGuestId, g] of w.model) {
      const a = actual.get(pmsGuestId);
      if (!a || a.room !== g.room || a.firstName !== g.firstName) {
        lost += 1;
        lines.push(
          `${w.hotel.slug}: ${pmsGuestId} expected in ${g.room} as ${g.firstName}, database has ${a ? `${a.room} as ${a.firstName}` : 'no active stay'}`,
        );
      }
    }
    for (const [pmsGuestId, a] of actual) {
      if (!w.model.has(pmsGuestId)) {
        lost += 1;
        lines.push(`${w.hotel.slug}: ${pmsGuestId} active in ${a.room} in the database, checked out (or never in) in the model`);
      }
    }
    const entries = await sql<{ n: number }>`select count(*) as n from activity_log where hotel_id = ${w.hotel.id}`.execute(db);
    const n = Number(entries.rows[0]?.n ?? 0);
    if (n > w.settled) {
      doubled += n - w.settled;
      lines.push(`${w.hotel.slug}: ${n} activity entries for ${w.settled} operations (processed twice)`);
    } else if (n < w.settled) {
      lost += w.settled - n;
      lines.push(`${w.hotel.slug}: ${n} activity entries for ${w.settled} acknowledged operations (lost)`);
    }
  }
  return { lost, doubled, lines };
}

/**
 * Acknowledged operations sent again with their key: each must be replayed (200,
 * `_idempotent`, the body first answered), proving its record was kept with the change.
 * At most `perHotel` operations of each hotel (the keys' rate limits count these too),
 * the hotels in parallel.
 */
export async function replayCheck(
  baseUrl: string,
  workers: HotelWorker[],
  pick: (op: Op) => boolean,
  perHotel = 20,
): Promise<{ checked: number; lines: string[] }> {
  const lines: string[] = [];
  let checked = 0;
  await Promise.all(
    workers.map(async (w) => {
      const chosen = w.ops.filter((op) => op.answers.some((a) => a.status === 200) && pick(op)).slice(-perHotel);
      for (const op of chosen) {
        const first = op.answers.find((a) => a.status === 200) as Answer;
        checked += 1;
        let again = await pmsPost(baseUrl, w.hotel.slug, PATHS[op.endpoint], op.apiKey, op.key, op.body);
        while (again.status === 429) {
          await sleep((Number(again.body?.retryAfter ?? 1) || 1) * 1000);
          again = await pmsPost(baseUrl, w.hotel.slug, PATHS[op.endpoint], op.apiKey, op.key, op.body);
        }
        const { _idempotent: _a, ...firstBody } = first.body as Record<string, unknown>;
        const { _idempotent: _b, ...againBody } = (again.body ?? {}) as Record<string, unknown>;
        if (!isReplay(again) || JSON.stringify(againBody) !== JSON.stringify(firstBody)) {
          lines.push(
            `${w.hotel.slug} ${op.kind} ${op.pmsGuestId} (key ${op.key}): acknowledged ${JSON.stringify(first.body)}, sent again: ${describeAnswer(again)} ${JSON.stringify(again.body).slice(0, 200)}`,
          );
        }
      }
    }),
  );
  return { checked, lines };
}
