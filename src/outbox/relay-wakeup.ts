/**
 * The relay's wake-up signal. A writer that committed outbox rows calls `notify()`: the
 * relay of this process wakes at once, and the relays of the other replicas through a
 * Postgres NOTIFY, because the rows may sit in a bucket another replica owns. NOTIFYs are
 * throttled (one at the start of a window of `throttleMs`, one at its end if more calls
 * came), so a burst of commits costs two statements, not one per commit. The NOTIFY is
 * sent after the writer's commit rather than inside its transaction on purpose: Postgres
 * serializes the commits of transactions that NOTIFY (a global lock held through the
 * commit), which would queue the hot path's commits behind one another. Writers without a
 * relay in their process (the CLI) NOTIFY inside their transaction instead
 * (OutboxRepository's `notifyInTransaction`).
 */
import { describeError } from '../errors/app-error.js';
import type { AppLogger } from '../logging/logger.js';
import { Wakeup } from '../concurrency/wakeup.js';
import type { Sql } from '../database/database.js';
import {
  RELAY_SIGNAL,
  type RelayLockRepository,
  type RelaySignal,
} from './relay-locks.repository.js';

export interface RelayWakeupOptions {
  readonly sql: Sql;
  readonly locks: RelayLockRepository;
  /** At most one NOTIFY per this many ms; 0 = never NOTIFY. */
  readonly throttleMs: number;
  /** Whether the relay runs: a stopped relay is not woken and sends nothing. */
  readonly isRunning: () => boolean;
  /** A relay joined or left (or gave buckets back): revisit bucket ownership soon. */
  readonly onMembersChanged: () => void;
  readonly logger: AppLogger;
}

export class RelayWakeup {
  private readonly local = new Wakeup();
  private timer: NodeJS.Timeout | null = null;
  private again = false;

  constructor(private readonly options: RelayWakeupOptions) {}

  /**
   * Sleeps up to `ms`; returns at once when woken meanwhile (or since the last wait).
   * Resolves true when woken, false when the time ran out.
   */
  wait(ms: number): Promise<boolean> {
    return this.local.wait(ms);
  }

  /** Wakes this process's relay only. */
  wake(): void {
    this.local.wake();
  }

  /** Wakes this relay and, through a throttled NOTIFY, every other one. */
  notify(): void {
    if (!this.options.isRunning()) return;
    this.local.wake();
    if (this.options.throttleMs <= 0) return;
    if (this.timer) {
      this.again = true;
      return;
    }
    this.sendNotify();
  }

  /** A NOTIFY on the relays' channel (the process's LISTEN connection received it). */
  received(payload: string): void {
    if (!this.options.isRunning()) return;
    if (payload === RELAY_SIGNAL.MEMBERS) this.options.onMembersChanged();
    this.local.wake();
  }

  /** Tells every relay (this one too) that membership changed. Never throws. */
  async announce(signal: RelaySignal): Promise<void> {
    await this.options.locks.notify(this.options.sql, signal).catch((error: unknown) => {
      this.options.logger.debug({ error: describeError(error) }, 'outbox NOTIFY failed');
    });
  }

  /** Forgets a pending trailing NOTIFY (the relay stops). */
  reset(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.again = false;
  }

  /** Leading-edge NOTIFY, and one trailing NOTIFY for calls during the throttle window. */
  private sendNotify(): void {
    this.options.locks.notify(this.options.sql).catch((error: unknown) => {
      this.options.logger.debug({ error: describeError(error) }, 'outbox NOTIFY failed');
    });
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.again && this.options.isRunning()) {
        this.again = false;
        this.sendNotify();
      }
    }, this.options.throttleMs);
  }
}
