/**
 * Which outbox buckets this replica publishes. Each replica holds session-level advisory
 * locks, on one dedicated pool connection, for the buckets it owns; it takes at most its
 * fair share (buckets / running relays, counted through a shared "member" lock) and, at
 * every rebalance, gives back what is above it and tries to take buckets nobody owns. A
 * replica that dies loses its session and with it its locks, and the others take its
 * buckets over. (Wake-ups arrive on the process's shared LISTEN connection, not here.)
 *
 * Ownership spreads the work, and the relay's pipelined passes publish only the buckets the
 * lock connection (`lockPid()`) still holds when their transaction fences them
 * (RelayLockRepository.fenceOwned); order per key is kept by that fence, whoever owns the
 * bucket.
 */
import { describeError } from '../errors/app-error.js';
import type { AppLogger } from '../logging/logger.js';
import { sqlOf } from '../database/database.js';
import { checkOut, type HeldConnection, type PoolLike } from '../database/pooled-connection.js';
import { OUTBOX_BUCKETS } from './outbox.repository.js';
import type { RelayLockRepository } from './relay-locks.repository.js';

export interface BucketOwnershipOptions {
  /** Where the dedicated lock connection comes from (the pg pool). */
  readonly pool: PoolLike;
  readonly locks: RelayLockRepository;
  /** Whether the relay runs: a stopped relay claims nothing. */
  readonly isRunning: () => boolean;
  /** `bucket` was given back (above the fair share): forget its state. */
  readonly onDisowned: (bucket: number) => void;
  /**
   * The lock connection was lost (Postgres restarted, the session was ended) and every
   * bucket with it: claim them again as soon as Postgres answers.
   */
  readonly onLost: () => void;
  readonly logger: AppLogger;
}

export class BucketOwnership {
  /** Where this replica starts looking for free buckets, so replicas spread out. */
  private readonly firstBucket = Math.floor(Math.random() * OUTBOX_BUCKETS);
  private readonly owned = new Set<number>();
  private lock: HeldConnection | null = null;
  /** The lock connection's backend pid (the session that holds the BUCKET_OWNER locks). */
  private pid: number | null = null;
  /** The last rebalance failed (logged once until one succeeds). */
  private failing = false;

  constructor(private readonly options: BucketOwnershipOptions) {}

  /** Buckets this replica owns right now (sorted). */
  buckets(): number[] {
    return [...this.owned].sort((a, b) => a - b);
  }

  /** The backend pid of the session holding this replica's bucket locks; null: none held. */
  lockPid(): number | null {
    return this.lock === null ? null : this.pid;
  }

  get size(): number {
    return this.owned.size;
  }

  /**
   * Gives back buckets above the fair share and claims free ones up to it; says what
   * changed, and `failed` when it could not (Postgres away: the caller tries again soon).
   * Never throws: a failure is logged and the lock connection dropped (its locks go with it).
   */
  async rebalance(): Promise<{ gained: number; given: number; failed: boolean }> {
    try {
      const changed = await this.claimFairShare();
      this.failing = false;
      return { ...changed, failed: false };
    } catch (error) {
      // Retried every second while Postgres is away: one warning per outage, not one a try.
      const fields = { error: describeError(error) };
      if (this.failing) this.options.logger.debug(fields, 'outbox bucket rebalance failed');
      else this.options.logger.warn(fields, 'outbox bucket rebalance failed');
      this.failing = true;
      this.drop(error);
      return { gained: 0, given: 0, failed: true };
    }
  }

  /** Releases every bucket and the lock connection (graceful stop). */
  async release(): Promise<void> {
    const lock = this.lock;
    this.lock = null;
    this.owned.clear();
    if (!lock) return;
    try {
      await this.options.locks.leave(lock.client);
      lock.release();
    } catch (error) {
      lock.release(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private async claimFairShare(): Promise<{ gained: number; given: number }> {
    if (!this.options.isRunning()) return { gained: 0, given: 0 };
    const { locks } = this.options;
    const lock = await this.lockConnection();
    const sql = sqlOf(lock.client);
    // A lock taken on a connection that died meanwhile is no lock: count only live ones.
    const live = (): boolean => this.lock === lock;
    const members = await locks.countMembers(sql);
    const fairShare = Math.ceil(OUTBOX_BUCKETS / Math.max(1, members));

    const excess = this.buckets().slice(fairShare);
    for (const bucket of excess) {
      await locks.disown(sql, bucket);
      this.owned.delete(bucket);
      this.options.onDisowned(bucket);
    }
    let gained = 0;
    if (this.owned.size >= fairShare) return { gained, given: excess.length };

    const taken = await locks.ownedByAnyone(sql);
    for (let i = 0; i < OUTBOX_BUCKETS && this.owned.size < fairShare; i++) {
      const bucket = (this.firstBucket + i) % OUTBOX_BUCKETS;
      if (taken.has(bucket) || this.owned.has(bucket)) continue;
      if ((await locks.tryOwn(sql, bucket)) && live()) {
        this.owned.add(bucket);
        gained += 1;
      }
    }
    return { gained, given: excess.length };
  }

  /** The dedicated connection that holds this replica's session locks. */
  private async lockConnection(): Promise<HeldConnection> {
    if (this.lock) return this.lock;
    const lock = await checkOut(this.options.pool, {
      onLost: (error) => {
        if (this.lock !== lock) return;
        this.options.logger.warn(
          { error: describeError(error), buckets: this.owned.size },
          'outbox relay lost its lock connection; its buckets are free for other replicas',
        );
        this.drop(error);
        this.options.onLost();
      },
    });
    try {
      this.pid = await this.options.locks.join(lock.client);
    } catch (error) {
      lock.release(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
    this.lock = lock;
    return lock;
  }

  /** Forgets the lock connection (destroying it, so that Postgres frees its locks). */
  private drop(error: unknown): void {
    const lock = this.lock;
    this.lock = null;
    this.owned.clear();
    lock?.release(error instanceof Error ? error : new Error(String(error)));
  }
}
