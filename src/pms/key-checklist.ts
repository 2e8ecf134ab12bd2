// The go-live checklist of a key pair: which behaviours its PMS has shown, separately with
// the test and the live key (docs/dashboard.md). Each is read off the request-log rows as
// the writer stores them (pms/request-log.ts) and kept as one row per key, mode and
// behaviour: the first request that showed it. The dashboard then reads at most 16 rows
// per key pair, however long the log, instead of searching 90 days of it per page view.
//
// - checkin, update, checkout, sync: a request to that endpoint answered 2xx.
// - room_move: an update answered 2xx that moved the guest: live, its `changes` hold
//   roomNumber; test (the sandbox stores nothing), the request carried a roomNumber.
// - idempotent_replay: an answer replayed from the idempotency store (Idempotent-Replayed).
// - conflict_handled: after a 409 ROOM_OCCUPIED or GUEST_ALREADY_CHECKED_IN, the key's
//   next request to that endpoint carried another body and was answered 2xx (it did not
//   repeat the refused request). The test key gets these 409s by its trigger values
//   (pms/sandbox-triggers.ts), so it can show this before the PMS goes live.
// - retry_after_honoured: after a 429, the key's next request to that endpoint came no
//   earlier than the answer's time plus its Retry-After.
//
// "Next request" needs the answer before it: a 409 or 429 waiting for it is kept in
// key_checklist_pending (per key, mode, endpoint and kind), so it survives restarts and is
// shared by every instance on one database.

import type { Db } from '../db/database.js';
import {
  deletePendingAnswer,
  insertChecklistFacts,
  listPendingAnswers,
  savePendingAnswer,
  type ChecklistFact,
  type PendingAnswer,
} from '../db/repositories/key-checklist.repository.js';
import type { LoggedRequest } from '../db/repositories/request-log.repository.js';
import { sha256Hex } from '../domain/ids.js';
import type { PmsEndpoint } from '../rate-limit/limits.js';
import { canonicalJson } from './idempotency.js';

export const CHECKLIST_ITEMS = ['checkin', 'update', 'room_move', 'checkout', 'sync', 'idempotent_replay', 'conflict_handled', 'retry_after_honoured'] as const;
export type ChecklistItem = (typeof CHECKLIST_ITEMS)[number];

/** The 409s a PMS must not answer by sending the same request again. */
const ROSTER_CONFLICTS = new Set(['ROOM_OCCUPIED', 'GUEST_ALREADY_CHECKED_IN']);

type KeyMode = 'live' | 'test';

/** What the checklist needs of one request-log row of a key. */
interface Observation {
  pairId: string;
  mode: KeyMode;
  endpoint: PmsEndpoint;
  requestId: string;
  at: string;
  statusCode: number;
  replayed: boolean;
  roomMove: boolean;
  /** 409: the conflict's error code. */
  errorCode: string | null;
  /** 429: the Retry-After seconds. */
  retryAfter: number | null;
  /** The request body as logged; compared (bodySha256) only after a 409. */
  requestBody: string | null;
}

function parsed(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null; // not JSON, or cut by the request log's cap
  }
}

const has = (o: unknown, member: string): boolean => o !== null && typeof o === 'object' && member in o;

function movedRoom(row: LoggedRequest, mode: KeyMode): boolean {
  if (mode === 'test') return has(parsed(row.requestBody), 'roomNumber');
  return has(parsed(row.responseBody)?.changes, 'roomNumber');
}

/** The row as the checklist sees it; null for a row of no key or of no PMS endpoint. */
function observe(row: LoggedRequest): Observation | null {
  if (!row.keyId || !row.mode || !row.endpoint) return null;
  const ok = row.statusCode >= 200 && row.statusCode < 300;
  const answer = row.statusCode === 409 || row.statusCode === 429 ? parsed(row.responseBody) : null;
  return {
    pairId: row.keyId,
    mode: row.mode,
    endpoint: row.endpoint,
    requestId: row.id,
    at: row.at,
    statusCode: row.statusCode,
    replayed: row.replayed === true,
    roomMove: ok && row.endpoint === 'update' && movedRoom(row, row.mode),
    errorCode: typeof answer?.code === 'string' ? answer.code : null,
    retryAfter: typeof answer?.retryAfter === 'number' ? answer.retryAfter : null,
    requestBody: row.requestBody,
  };
}

/** The body's fingerprint: member order and white space do not make another body. */
function bodySha256(o: Observation): string {
  const body = parsed(o.requestBody);
  return sha256Hex(body ? canonicalJson(body) : (o.requestBody ?? ''));
}

const SIMPLE: Partial<Record<PmsEndpoint, ChecklistItem>> = { checkin: 'checkin', update: 'update', checkout: 'checkout', sync: 'sync' };

/** The behaviours a request shows on its own. */
function shownAlone(o: Observation): ChecklistItem[] {
  if (o.statusCode < 200 || o.statusCode >= 300) return [];
  const items: ChecklistItem[] = [];
  const simple = SIMPLE[o.endpoint];
  if (simple) items.push(simple);
  if (o.roomMove) items.push('room_move');
  if (o.replayed) items.push('idempotent_replay');
  return items;
}

const pendingKey = (p: { pair_id: string; mode: string; endpoint: string; kind: string }): string => `${p.pair_id}|${p.mode}|${p.endpoint}|${p.kind}`;

/** The answer this request leaves waiting for the key's next one, if any. */
function waiting(o: Observation): PendingAnswer | null {
  const base = { pair_id: o.pairId, mode: o.mode, endpoint: o.endpoint, at: o.at };
  if (o.statusCode === 409 && o.errorCode && ROSTER_CONFLICTS.has(o.errorCode)) {
    return { ...base, kind: 'conflict', body_sha256: bodySha256(o), allowed_at: null };
  }
  if (o.statusCode === 429 && o.retryAfter !== null) {
    return { ...base, kind: 'rate_limited', body_sha256: null, allowed_at: new Date(Date.parse(o.at) + o.retryAfter * 1000).toISOString() };
  }
  return null;
}

/** What this request, as the next one after a waiting answer, shows. */
function shownAfter(o: Observation, before: PendingAnswer): ChecklistItem | null {
  const ok = o.statusCode >= 200 && o.statusCode < 300;
  if (before.kind === 'conflict') return ok && bodySha256(o) !== before.body_sha256 ? 'conflict_handled' : null;
  return before.allowed_at !== null && o.at >= before.allowed_at ? 'retry_after_honoured' : null;
}

interface ChecklistChanges {
  facts: ChecklistFact[];
  /** Waiting answers to store (`keep`) or to drop, by pendingKey. */
  pending: Map<string, { keep: boolean; answer: PendingAnswer }>;
}

/** Applies requests (in the order answered) to the answers waiting before them. */
function applyObservations(observations: Observation[], waitingBefore: PendingAnswer[]): ChecklistChanges {
  const current = new Map(waitingBefore.map((p) => [pendingKey(p), p]));
  const changes: ChecklistChanges = { facts: [], pending: new Map() };
  const fact = (o: Observation, item: ChecklistItem): void => {
    changes.facts.push({ pair_id: o.pairId, mode: o.mode, item, shown_at: o.at, request_id: o.requestId });
  };
  for (const o of observations) {
    for (const item of shownAlone(o)) fact(o, item);
    for (const kind of ['conflict', 'rate_limited'] as const) {
      const key = pendingKey({ pair_id: o.pairId, mode: o.mode, endpoint: o.endpoint, kind });
      const before = current.get(key);
      if (!before) continue;
      const item = shownAfter(o, before);
      if (item) fact(o, item);
      current.delete(key);
      changes.pending.set(key, { keep: false, answer: before });
    }
    const next = waiting(o);
    if (next) {
      current.set(pendingKey(next), next);
      changes.pending.set(pendingKey(next), { keep: true, answer: next });
    }
  }
  return changes;
}

/** Records the checklist of the request-log rows just written. */
export class KeyChecklistRecorder {
  /** Facts this process has stored already: each is written once. */
  private readonly stored = new Set<string>();

  constructor(private readonly db: Db) {}

  async record(rows: LoggedRequest[]): Promise<void> {
    const observations = rows.map(observe).filter((o): o is Observation => o !== null);
    if (observations.length === 0) return;
    const pairIds = [...new Set(observations.map((o) => o.pairId))];
    const changes = applyObservations(observations, await listPendingAnswers(this.db, pairIds));
    // One row per behaviour: the first request that showed it.
    const firsts = new Map<string, ChecklistFact>();
    for (const f of changes.facts) {
      const key = `${f.pair_id}|${f.mode}|${f.item}`;
      if (!this.stored.has(key) && !firsts.has(key)) firsts.set(key, f);
    }
    await insertChecklistFacts(this.db, [...firsts.values()]);
    for (const key of firsts.keys()) this.stored.add(key);
    for (const { keep, answer } of changes.pending.values()) {
      await (keep ? savePendingAnswer(this.db, answer) : deletePendingAnswer(this.db, answer));
    }
  }
}
