/**
 * What this worker knows of its own started attempts but could not commit (the protocol's
 * memory, attempt-protocol.ts): an outcome Payflow applied whose COMMIT failed, or a call
 * without effect whose record failed. The guard decision (attempt-decision.ts) reads it:
 * `outcome` resumes (records it without calling Payflow again), `no_effect` restarts the
 * attempt. Only in memory: a worker that stops forgets it, and its attempt then waits for its
 * lease like any other.
 *
 * It is changed only after a batch committed, never inside a TransactionBatcher unit, which
 * may run twice.
 */
import type { BatchSql } from '../../../database/transaction-batcher.js';
import type { PendingOutcome } from './attempt-decision.js';

/** An outcome known in memory whose recording failed. */
export type Pending =
  | { readonly kind: 'outcome'; readonly finish: (tx: BatchSql) => Promise<void> }
  | { readonly kind: 'no_effect' };

/** Bound of the in-memory pending outcomes (the oldest is forgotten first). */
export const MAX_PENDING = 10_000;

export class PendingOutcomes {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly max = MAX_PENDING) {}

  /** What the guard decision is told about the event. */
  kindOf(eventId: string): PendingOutcome | null {
    return this.pending.get(eventId)?.kind ?? null;
  }

  /** The recording of the outcome to resume; throws when there is none. */
  outcome(eventId: string): (tx: BatchSql) => Promise<void> {
    const pending = this.pending.get(eventId);
    if (pending?.kind !== 'outcome') throw new Error('no outcome to resume');
    return pending.finish;
  }

  remember(eventId: string, outcome: Pending): void {
    this.pending.delete(eventId);
    this.pending.set(eventId, outcome);
    if (this.pending.size > this.max) {
      const oldest = this.pending.keys().next();
      if (oldest.done !== true) this.pending.delete(oldest.value);
    }
  }

  /** The event's attempt was recorded, or superseded by a new attempt (once committed). */
  forget(eventId: string): void {
    this.pending.delete(eventId);
  }
}
