import { EventEmitter } from 'node:events';
import type { DbOrTrx } from '../db/database.js';

/** A committed change to a hotel's roster. */
export interface RosterChange {
  hotelId: string;
  /**
   * Guests whose active state changed: checked in, updated, moved or checked out. Empty
   * means "re-read the roster": changes may have been missed (a reconnect) or were too
   * many to list (a large sync, a backlog).
   */
  changes: Array<{
    action: 'guest.checked_in' | 'guest.updated' | 'guest.room_moved' | 'guest.checked_out';
    guestId: string;
    pmsGuestId: string | null;
    roomNumber: string;
  }>;
  at: string;
}

/**
 * The roster-change bus: in-process (one instance, SQLite), or across instances
 * (postgres-roster-events.ts). A change is handed to the bus twice: inside its own
 * transaction (`publishInTransaction`), so it leaves only if the change commits, and
 * after the commit (`committed`); each bus acts on the one that fits it.
 */
export interface RosterEventBus {
  /** Runs inside the change's transaction, after its writes. */
  publishInTransaction(trx: DbOrTrx, change: RosterChange): Promise<void>;
  /** Called once the change's transaction has committed. Never throws. */
  committed(change: RosterChange): void;
  /** Calls `listener` for each change of `hotelId`; returns the unsubscribe function. */
  subscribe(hotelId: string, listener: (change: RosterChange) => void): () => void;
  close(): Promise<void>;
}

export class InProcessRosterEventBus implements RosterEventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publishInTransaction(): Promise<void> {
    return Promise.resolve();
  }

  /** Subscribers hear the change once it is committed. */
  committed(change: RosterChange): void {
    this.emit(change);
  }

  /** Hands a change to this process's subscribers. */
  emit(change: RosterChange): void {
    this.emitter.emit(change.hotelId, change);
  }

  subscribe(hotelId: string, listener: (change: RosterChange) => void): () => void {
    this.emitter.on(hotelId, listener);
    return () => this.emitter.off(hotelId, listener);
  }

  close(): Promise<void> {
    this.emitter.removeAllListeners();
    return Promise.resolve();
  }
}
