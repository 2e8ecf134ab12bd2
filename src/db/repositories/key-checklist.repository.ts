import type { Selectable } from 'kysely';
import type { DbOrTrx } from '../database.js';
import type { KeyChecklistPendingTable, KeyChecklistTable } from '../schema.js';

export type ChecklistFact = Selectable<KeyChecklistTable>;
export type PendingAnswer = Selectable<KeyChecklistPendingTable>;

/** Records behaviours shown; one already recorded keeps its first time. */
export async function insertChecklistFacts(db: DbOrTrx, facts: ChecklistFact[]): Promise<void> {
  if (facts.length === 0) return;
  await db
    .insertInto('key_checklist')
    .values(facts)
    .onConflict((oc) => oc.columns(['pair_id', 'mode', 'item']).doNothing())
    .execute();
}

/** The behaviours one key pair has shown, both modes. */
export async function listChecklistFacts(db: DbOrTrx, pairId: string): Promise<ChecklistFact[]> {
  return db.selectFrom('key_checklist').selectAll().where('pair_id', '=', pairId).execute();
}

/** The answers of these key pairs still waiting for the key's next request. */
export async function listPendingAnswers(db: DbOrTrx, pairIds: string[]): Promise<PendingAnswer[]> {
  if (pairIds.length === 0) return [];
  return db.selectFrom('key_checklist_pending').selectAll().where('pair_id', 'in', pairIds).execute();
}

/** Stores a waiting answer (replacing the one of its key, mode, endpoint and kind). */
export async function savePendingAnswer(db: DbOrTrx, p: PendingAnswer): Promise<void> {
  await db
    .insertInto('key_checklist_pending')
    .values(p)
    .onConflict((oc) => oc.columns(['pair_id', 'mode', 'endpoint', 'kind']).doUpdateSet({ at: p.at, body_sha256: p.body_sha256, allowed_at: p.allowed_at }))
    .execute();
}

export async function deletePendingAnswer(db: DbOrTrx, p: Pick<PendingAnswer, 'pair_id' | 'mode' | 'endpoint' | 'kind'>): Promise<void> {
  await db
    .deleteFrom('key_checklist_pending')
    .where('pair_id', '=', p.pair_id)
    .where('mode', '=', p.mode)
    .where('endpoint', '=', p.endpoint)
    .where('kind', '=', p.kind)
    .execute();
}
