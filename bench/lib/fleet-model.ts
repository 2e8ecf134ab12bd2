/**
 * The fleet load model of docs/scale.md in numbers: hotel sizes (log-normal, truncated),
 * occupancy, stay length, and what a hotel's PMS, its staff and its webhook receiver do per
 * day. Pure functions: bench/fleet.ts plays it, docs/scale.md prints it.
 */

export interface FleetModel {
  /** Median of the log-normal room count (e^mu). */
  medianRooms: number;
  /** Sigma of the log-normal (of ln rooms). */
  sigma: number;
  minRooms: number;
  maxRooms: number;
  /** Share of rooms occupied, 0-1. */
  occupancy: number;
  /** Average stay in nights: each occupied room turns over every `stayNights` days. */
  stayNights: number;
  /** Updates (a changed party, an extended stay) per stay. */
  updatesPerStay: number;
  /** Share of check-ins the PMS sends twice with a new Idempotency-Key (answered 409 GUEST_ALREADY_CHECKED_IN). */
  duplicateCheckInShare: number;
  /** A full-list sync of every hotel this often. */
  syncEveryMinutes: number;
  /** One open dashboard per this many hotels. */
  hotelsPerDashboard: number;
  /** Share of hotels with a webhook endpoint. */
  webhookShare: number;
}

export const DEFAULT_MODEL: FleetModel = {
  medianRooms: 120,
  sigma: 0.6,
  minRooms: 40,
  maxRooms: 800,
  occupancy: 0.75,
  stayNights: 2.5,
  updatesPerStay: 1,
  duplicateCheckInShare: 0.01,
  syncEveryMinutes: 5,
  hotelsPerDashboard: 5,
  webhookShare: 0.2,
};

/** The service's per-key limits (src/rate-limit/limits.ts, README.md), per window. */
export const KEY_LIMITS = { checkinPerMinute: 60, updatePerMinute: 60, checkoutPerMinute: 60, syncPerHour: 10 } as const;

/** A small seeded generator (mulberry32): the same seed, the same fleet. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Room counts of `n` hotels: log-normal (median, sigma), values outside [min, max] drawn again. */
export function hotelSizes(n: number, m: FleetModel, random: () => number): number[] {
  const mu = Math.log(m.medianRooms);
  const out: number[] = [];
  while (out.length < n) {
    // Box-Muller.
    const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    const rooms = Math.round(Math.exp(mu + m.sigma * z));
    if (rooms >= m.minRooms && rooms <= m.maxRooms) out.push(rooms);
  }
  return out;
}

/** Per hotel and model day. */
export interface HotelDay {
  occupied: number;
  checkIns: number;
  updates: number;
  checkOuts: number;
  duplicates: number;
  syncs: number;
  /** Guests sent in syncs (each sync lists everyone in house). */
  syncedGuests: number;
}

export function hotelDay(rooms: number, m: FleetModel): HotelDay {
  const occupied = rooms * m.occupancy;
  const checkIns = occupied / m.stayNights;
  const syncs = (24 * 60) / m.syncEveryMinutes;
  return {
    occupied,
    checkIns,
    updates: checkIns * m.updatesPerStay,
    checkOuts: checkIns,
    duplicates: checkIns * m.duplicateCheckInShare,
    syncs,
    syncedGuests: syncs * occupied,
  };
}

/**
 * Key pairs a hotel's PMS needs so that no per-key limit answers 429 at `speedup` (model
 * time runs this much faster than the limits' wall-clock windows), over `wallSeconds`.
 * Syncs count in fixed hourly windows: every sync of the run may fall into one.
 */
export function keyPairsNeeded(rooms: number, m: FleetModel, speedup: number, wallSeconds: number): { pairs: number; syncsPerHourPerHotel: number } {
  const day = hotelDay(rooms, m);
  const syncsPerHour = (day.syncs / 24) * speedup;
  const syncsInRun = Math.ceil((wallSeconds * speedup) / (m.syncEveryMinutes * 60)) + 2;
  const bySync = Math.ceil(Math.min(syncsInRun, syncsPerHour) / KEY_LIMITS.syncPerHour);
  // Check-ins per wall minute (duplicates included), with a margin of 3 for Poisson bursts.
  const perMinute = ((day.checkIns * (1 + m.duplicateCheckInShare)) / (24 * 60)) * speedup * 3;
  const byMinute = Math.ceil(perMinute / KEY_LIMITS.checkinPerMinute);
  return { pairs: Math.max(1, bySync, byMinute), syncsPerHourPerHotel: syncsPerHour };
}
