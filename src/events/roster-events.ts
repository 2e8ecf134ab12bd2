import { EventEmitter } from 'node:events';

/** A committed change to a hotel's roster, published after the transaction commits. */
export interface RosterChange {
  hotelId: string;
  /** Guests whose active state changed: checked in, updated, moved or checked out. */
  changes: Array<{
    action: 'guest.checked_in' | 'guest.updated' | 'guest.room_moved' | 'guest.checked_out';
    guestId: string;
    pmsGuestId: string | null;
    roomNumber: string;
  }>;
  at: string;
}

/** The roster-change bus: in-process (one instance, SQLite), or across instances (postgres-roster-events.ts). */
export interface RosterEventBus {
  publish(change: RosterChange): void;
  /** Calls `listener` for each change of `hotelId`; returns the unsubscribe function. */
  subscribe(hotelId: string, listener: (change: RosterChange) => void): () => void;
  close(): Promise<void>;
}

export class InProcessRosterEventBus implements RosterEventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish(change: RosterChange): void {
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
