import type { DbOrTrx } from '../database.js';
import { newId } from '../../domain/ids.js';

// docs/dashboard.md, "Access trail": every view of a guest's personal data in the dashboard,
// and the security events of staff accounts and keys, each one row.

/** What an access entry records that a staff member saw. */
export const ACCESS_ACTIONS = ['guest.viewed', 'roster.viewed', 'guest.searched', 'guest.exported', 'guest.erased', 'request_log.viewed'] as const;
export type AccessAction = (typeof ACCESS_ACTIONS)[number];

/** The security events kept as entries an admin can read. */
export const SECURITY_EVENT_KINDS = [
  'login.failed',
  'csrf.refused',
  'password.changed',
  'factor.added',
  'factor.removed',
  'factors.reset',
  'passkeys_only.on',
  'passkeys_only.off',
  'recovery_code.used',
  'mfa.required',
  'mfa.not_required',
  'session.ended',
  'sessions.ended',
  'display.paired',
  'display.unpaired',
  'staff.added',
  'staff.deactivated',
  'staff.role_changed',
  'key.issued',
  'key.revoked',
  'key.changed',
] as const;
export type SecurityEventKind = (typeof SECURITY_EVENT_KINDS)[number];

export interface AccessEntry {
  hotelId: string;
  staffUserId: string;
  clientIp: string | null;
  action: AccessAction;
  guestId?: string | null;
  search?: string | null;
  at?: string;
}

/** Written in the caller's transaction when there is one (an erasure's entry commits with it). */
export async function insertAccessEntry(db: DbOrTrx, e: AccessEntry): Promise<void> {
  await insertAccessEntries(db, [e]);
}

/** Several entries in one insert (a request-log body's guests); none, no statement. */
export async function insertAccessEntries(db: DbOrTrx, entries: AccessEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const at = new Date().toISOString();
  await db
    .insertInto('access_log')
    .values(
      entries.map((e) => ({
        id: newId('acc'),
        hotel_id: e.hotelId,
        created_at: e.at ?? at,
        staff_user_id: e.staffUserId,
        client_ip: e.clientIp,
        action: e.action,
        guest_id: e.guestId ?? null,
        search: e.search ?? null,
      })),
    )
    .execute();
}

export interface SecurityEvent {
  hotelId: string;
  kind: SecurityEventKind;
  /** Who acted: a signed-in staff member, the operator's command line, or nobody known (a failed sign-in). */
  actor: { type: 'staff'; userId: string } | { type: 'operator' } | { type: 'anonymous' };
  subjectUserId?: string | null;
  subjectKeyPairId?: string | null;
  clientIp?: string | null;
  /** What changed; never a secret, a password or a guest's data. */
  detail?: Record<string, unknown> | null;
  at?: string;
}

/** Written in the caller's transaction when there is one, so the event commits with the change. */
export async function insertSecurityEvent(db: DbOrTrx, e: SecurityEvent): Promise<void> {
  await db
    .insertInto('security_events')
    .values({
      id: newId('sec'),
      hotel_id: e.hotelId,
      created_at: e.at ?? new Date().toISOString(),
      kind: e.kind,
      actor_type: e.actor.type,
      actor_id: e.actor.type === 'staff' ? e.actor.userId : null,
      subject_user_id: e.subjectUserId ?? null,
      subject_key_pair_id: e.subjectKeyPairId ?? null,
      client_ip: e.clientIp ?? null,
      detail: e.detail ? JSON.stringify(e.detail) : null,
    })
    .execute();
}

/** Who made a change: a signed-in staff member with the client's address, or the operator's command line. */
export interface ChangedBy {
  actor: Extract<SecurityEvent['actor'], { type: 'staff' } | { type: 'operator' }>;
  clientIp: string | null;
}

/** The command line's changes. */
export const OPERATOR: ChangedBy = { actor: { type: 'operator' }, clientIp: null };
