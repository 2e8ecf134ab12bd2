import { randomUUID } from 'node:crypto';
import { request, type Agent } from 'undici';
import { readResponse, type ReadResponse } from '../../test/support/http-response.js';
import { now } from './stats.js';

// The PMS's side of a full hotel for the board benchmark: who is in which room, as the
// PMS knows it, the guests it sends, and its HTTPS client with its keys.

/** A stay as the PMS sends it (docs/pms-interface.md, "Guest fields"). */
export interface Stay {
  pmsGuestId: string;
  firstName: string;
  lastName: string;
  roomNumber: string;
  checkInDate: string;
  checkOutDate: string;
  adults: number;
  children: number;
  language: string;
}

const FIRST_NAMES = ['Anna', 'Ben', 'Chloé', 'David', 'Elif', 'Farid', 'Greta', 'Hiro', 'Ines', 'Jonas', 'Kofi', 'Lena', 'Marta', 'Nils', 'Olga', 'Pavel'];
const LAST_NAMES = [
  'Berg',
  'Costa',
  'Dubois',
  'Eriksen',
  'Fischer',
  'García',
  'Hansen',
  'Ito',
  'Jensen',
  'Kowalski',
  'Larsen',
  'Müller',
  'Novak',
  'Okafor',
  'Petrov',
];
const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'ja', 'nl'];

/** YYYY-MM-DD `days` after `date`. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Room numbers as hotels number them, 50 to a floor: 101–150, 201–250, … */
export function roomNumbers(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${Math.floor(i / 50) + 1}${String((i % 50) + 1).padStart(2, '0')}`);
}

/**
 * Every room of the hotel and its guest. Stays of one to five nights; the first guests
 * arrived over the last days, every later one arrives today (the hotel's day is UTC's).
 * The model changes only when the service has answered 200, so a sync's list is the
 * roster the service holds.
 */
export class FullHouse {
  readonly rooms: string[];
  private readonly byRoom = new Map<string, Stay>();
  private made = 0;

  constructor(
    roomCount: number,
    private readonly tag: string,
    private readonly today: string,
  ) {
    this.rooms = roomNumbers(roomCount);
  }

  /** A new guest for `room`, arrived `daysAgo` (less than the stay's nights, so nobody is overdue). */
  newStay(room: string, daysAgo = 0): Stay {
    const n = this.made++;
    const nights = 1 + (n % 5);
    const arrived = addDays(this.today, -Math.min(daysAgo, nights - 1));
    return {
      pmsGuestId: `PMS-${this.tag}-${n}`,
      firstName: FIRST_NAMES[n % FIRST_NAMES.length] ?? 'Anna',
      lastName: `${LAST_NAMES[(n * 7) % LAST_NAMES.length] ?? 'Berg'} ${n}`,
      roomNumber: room,
      checkInDate: arrived,
      checkOutDate: addDays(arrived, nights),
      adults: 1 + (n % 3),
      children: n % 4 === 0 ? 1 : 0,
      language: LANGUAGES[n % LANGUAGES.length] ?? 'en',
    };
  }

  /** A guest for every room: the first sync's list (the model takes it once answered). */
  fullList(): Stay[] {
    return this.rooms.map((room, i) => this.newStay(room, i % 4));
  }

  occupant(room: string): Stay | undefined {
    return this.byRoom.get(room);
  }

  checkedIn(stay: Stay): void {
    this.byRoom.set(stay.roomNumber, stay);
  }

  checkedOut(room: string): void {
    this.byRoom.delete(room);
  }

  /**
   * The next sync's list: everyone in house, with `changed` guests' parties changed (a
   * child added or gone), as a PMS's periodic list carries a few corrections. The model
   * takes the changes at once (a failed sync invalidates the run anyway).
   */
  syncList(round: number, changed: number): Stay[] {
    const stays = [...this.byRoom.values()];
    for (let i = 0; i < Math.min(changed, stays.length); i++) {
      const s = stays[(round * changed + i) % stays.length];
      if (s) this.byRoom.set(s.roomNumber, { ...s, children: s.children === 0 ? 1 : 0 });
    }
    return [...this.byRoom.values()];
  }
}

/**
 * API keys used in turn, `perKey` requests each. Limits count per key in fixed windows
 * (one minute for check-ins and check-outs, one hour for syncs); a cycling pool comes
 * back to a key only after all the others, which must take longer than its window.
 */
export class KeyPool {
  private used = 0;

  constructor(
    private readonly keys: string[],
    private readonly perKey: number,
    private readonly cycle: boolean,
  ) {}

  next(): string {
    const block = Math.floor(this.used++ / this.perKey);
    const key = this.cycle || block < this.keys.length ? this.keys[block % this.keys.length] : undefined;
    if (key === undefined) throw new Error('the key pool is used up');
    return key;
  }
}

/** An answer of the PMS API and when its status line arrived (epoch ms, `now()`). */
export type PmsAnswer = ReadResponse & { answeredAt: number };

/** The PMS's HTTPS client: POSTs with a key and a fresh Idempotency-Key. */
export class PmsClient {
  constructor(
    private readonly baseUrl: string,
    private readonly slug: string,
    private readonly agent: Agent,
  ) {}

  async post(path: string, key: string, body: unknown): Promise<PmsAnswer> {
    const res = await request(`${this.baseUrl}/api/pms/v1/${this.slug}${path}`, {
      method: 'POST',
      dispatcher: this.agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify(body),
    });
    // The answer counts as received with its status line and headers; the small body follows in the same read.
    const answeredAt = now();
    return { ...(await readResponse(res)), answeredAt };
  }
}
