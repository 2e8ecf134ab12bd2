import type { DbOrTrx } from '../database.js';

// A hotel's usage summary (docs/admin-api.md, "Hotels"): each count read by an index that
// leads with the hotel's id, so no other hotel's rows are read.

export interface HotelUsage {
  guestsInHouse: number;
  pmsRequests24h: { '2xx': number; '4xx': number; '5xx': number };
  lastPmsRequestAt: string | null;
  activeKeyPairs: number;
  activeStaffAccounts: number;
  webhookEndpoints: { enabled: number; disabled: number };
}

const count = (row: { n: number | string | bigint } | undefined): number => Number(row?.n ?? 0);

/** Requests of the hotel's keys since `since`, by status class (guests_hotel_status_idx, request_log_hotel_time_idx). */
async function requestsSince(db: DbOrTrx, hotelId: string, since: string): Promise<HotelUsage['pmsRequests24h']> {
  const rows = await db
    .selectFrom('request_log')
    .select(['status_code', (eb) => eb.fn.countAll().as('n')])
    .where('hotel_id', '=', hotelId)
    .where('created_at', '>=', since)
    .groupBy('status_code')
    .execute();
  const byClass = { '2xx': 0, '4xx': 0, '5xx': 0 };
  for (const r of rows) {
    const cls = `${Math.floor(Number(r.status_code) / 100)}xx`;
    if (cls === '2xx' || cls === '4xx' || cls === '5xx') byClass[cls] += Number(r.n);
  }
  return byClass;
}

export async function hotelUsage(db: DbOrTrx, hotelId: string, nowMs: number): Promise<HotelUsage> {
  const since = new Date(nowMs - 24 * 3600_000).toISOString();
  const [guests, requests, last, pairs, staff, hooks] = await Promise.all([
    db
      .selectFrom('guests')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('hotel_id', '=', hotelId)
      .where('status', '=', 'active')
      .executeTakeFirst(),
    requestsSince(db, hotelId, since),
    db.selectFrom('request_log').select('created_at').where('hotel_id', '=', hotelId).orderBy('created_at', 'desc').limit(1).executeTakeFirst(),
    db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.count('pair_id').distinct().as('n'))
      .where('hotel_id', '=', hotelId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst(),
    db
      .selectFrom('staff_users')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('hotel_id', '=', hotelId)
      .where('deactivated_at', 'is', null)
      .executeTakeFirst(),
    db
      .selectFrom('webhook_endpoints')
      .select([(eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.count('disabled_at').as('off')])
      .where('hotel_id', '=', hotelId)
      .executeTakeFirst(),
  ]);
  const endpoints = count(hooks);
  const disabled = Number(hooks?.off ?? 0);
  return {
    guestsInHouse: count(guests),
    pmsRequests24h: requests,
    lastPmsRequestAt: last?.created_at ?? null,
    activeKeyPairs: count(pairs),
    activeStaffAccounts: count(staff),
    webhookEndpoints: { enabled: endpoints - disabled, disabled },
  };
}
