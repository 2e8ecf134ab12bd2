import type { FullHouse, KeyPool, PmsAnswer, PmsClient } from './full-house.js';
import { now } from './stats.js';

export interface HouseLoadOptions {
  /** Check-ins per second (each after the check-out of the room's guest). */
  rate: number;
  /** A full-list sync this often. */
  syncEveryMs: number;
  /** Guests whose data each periodic sync changes. */
  syncChanges: number;
}

/** A check-in answered 200: the new guest and when the answer arrived (epoch ms). */
export interface CheckIn {
  guestId: string;
  answeredAt: number;
  /** False during the warm-up. */
  measured: boolean;
}

export interface SyncRun {
  ms: number;
  ok: boolean;
}

/** Rooms turn over in a random order, spread over the floors (Fisher-Yates). */
function shuffled(rooms: readonly string[]): string[] {
  const out = [...rooms];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as string, out[i] as string];
  }
  return out;
}

const sleepUntil = (t: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, t - now())));

/**
 * A PMS keeping a full hotel full: on a fixed schedule (`rate` per second, sent without
 * waiting for earlier ones) a room's guest checks out and a new guest checks in to it;
 * every `syncEveryMs` a full-list sync of everyone in house. The sync holds the queue, as
 * a PMS's ordered outbound queue does: it waits for the turnovers under way and new ones
 * wait for its answer, so its list is exactly the roster and nothing races it.
 */
export class HouseLoad {
  readonly checkIns: CheckIn[] = [];
  readonly syncs: SyncRun[] = [];
  readonly failures: string[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly busy = new Set<string>();
  private readonly order: string[];
  private cursor = 0;
  private syncing: Promise<void> | null = null;

  constructor(
    private readonly house: FullHouse,
    private readonly client: PmsClient,
    private readonly keys: { checkIn: KeyPool; checkOut: KeyPool; sync: KeyPool },
    private readonly o: HouseLoadOptions,
  ) {
    this.order = shuffled(house.rooms);
  }

  /** Runs for `totalMs`; check-ins scheduled before `measureFromMs` are the warm-up. */
  async run(totalMs: number, measureFromMs: number): Promise<void> {
    const start = now();
    let nextSync = start + this.o.syncEveryMs;
    let round = 0;
    for (let i = 0; ; i++) {
      const due = start + (i * 1000) / this.o.rate;
      if (due >= start + totalMs) break;
      if (due >= nextSync) {
        this.syncing = this.sync(round++).finally(() => (this.syncing = null));
        nextSync += this.o.syncEveryMs;
      }
      await sleepUntil(due);
      if (this.syncing) await this.syncing;
      this.track(this.turnover(this.nextRoom(), due - start >= measureFromMs));
    }
    await Promise.all(this.inFlight);
    if (this.syncing) await this.syncing;
  }

  private nextRoom(): string {
    for (;;) {
      const room = this.order[this.cursor++ % this.order.length] ?? '';
      if (!this.busy.has(room)) return room;
    }
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => void this.failures.push(String(err))).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async turnover(room: string, measured: boolean): Promise<void> {
    this.busy.add(room);
    try {
      const leaving = this.house.occupant(room);
      if (leaving) {
        const out = await this.client.post('/guests/checkout', this.keys.checkOut.next(), { pmsGuestId: leaving.pmsGuestId });
        if (out.status !== 200) return this.fail('check-out', out);
        this.house.checkedOut(room);
      }
      const stay = this.house.newStay(room);
      const res = await this.client.post('/guests/checkin', this.keys.checkIn.next(), stay);
      if (res.status !== 200) return this.fail('check-in', res);
      this.house.checkedIn(stay);
      this.checkIns.push({ guestId: String(res.body.guestId), answeredAt: res.answeredAt, measured });
    } finally {
      this.busy.delete(room);
    }
  }

  /** Waits for the turnovers under way, then sends the whole roster with a few guests changed; checks the answer's counts. */
  private async sync(round: number): Promise<void> {
    await Promise.all(this.inFlight);
    const guests = this.house.syncList(round, this.o.syncChanges);
    const started = now();
    const res = await this.client.post('/guests/sync', this.keys.sync.next(), { syncMode: 'full', guests });
    const s = res.body?.summary as Record<string, number> | undefined;
    const ok = res.status === 200 && s?.checkedIn === 0 && s.checkedOut === 0 && s.updated === Math.min(this.o.syncChanges, guests.length);
    this.syncs.push({ ms: res.answeredAt - started, ok });
    if (!ok) this.fail('sync', res);
  }

  private fail(what: string, a: PmsAnswer): void {
    this.failures.push(`${what}: ${a.status} ${a.text.slice(0, 200)}`);
  }
}
