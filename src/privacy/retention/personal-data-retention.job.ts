/**
 * RETENTION_PERSONAL_DATA (CONTRACT §10): once a day the personal data of orders untouched
 * for longer than the retention (their row, payments, dead letters and webhooks) is erased
 * the way `privacy erase` erases it, and so are key-less dead letters that old. Registered
 * with @nestjs/schedule's SchedulerRegistry at bootstrap, like the nightly settlement pull;
 * one replica runs it at a time (a session advisory lock), in batches of BATCH orders, each
 * its own transaction and its own `privacy_erasures` row. Shutdown stops the job and waits
 * for the batch under way.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { BackgroundWorker } from '../../concurrency/background-worker.js';
import { describeError } from '../../errors/app-error.js';
import { APP_LOGGER } from '../../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../../logging/logger.js';
import { Database } from '../../database/database.js';
import { DeadLetterRepository } from '../../dead-letters/dead-letter.repository.js';
import { OrderRepository } from '../../orders/order.repository.js';
import {
  NO_CHANGES,
  PrivacyEraseService,
  type ErasureCounts,
} from '../erase/privacy-erase.service.js';

export const PERSONAL_DATA_RETENTION_JOB = 'personal-data-retention';
export const PERSONAL_DATA_RETENTION_OPTIONS = Symbol('PERSONAL_DATA_RETENTION_OPTIONS');
/** One replica at a time. */
export const RETENTION_LOCK = { namespace: 0x70727601, key: 1 } as const;
/** Orders (and key-less dead letters) per transaction. */
const BATCH = 100;

export interface PersonalDataRetentionOptions {
  /** RETENTION_PERSONAL_DATA, in milliseconds. */
  readonly retentionMs: number;
  /** When it runs (seconds first); daily by default. */
  readonly cron?: string;
  readonly timeZone?: string;
  /** false: not started at bootstrap (the CLI, tests). */
  readonly autoStart?: boolean;
}

/** What one run did. */
export interface RetentionRunResult {
  /** false: another replica holds the job's lock. */
  readonly ran: boolean;
  readonly cutoff: Date;
  readonly orders: number;
  readonly keylessLetters: number;
  readonly counts: Readonly<ErasureCounts>;
  readonly changed: number;
}

/** Daily, at 03:45 in the given time zone (after the nightly settlement pull). */
const DEFAULT_CRON = '0 45 3 * * *';

@Injectable()
export class PersonalDataRetentionJob extends BackgroundWorker {
  private stopped = false;
  private current: Promise<RetentionRunResult | null> | null = null;

  constructor(
    @Inject(SchedulerRegistry) private readonly registry: SchedulerRegistry,
    @Inject(Database) private readonly database: Database,
    @Inject(OrderRepository) private readonly orders: OrderRepository,
    @Inject(DeadLetterRepository) private readonly letters: DeadLetterRepository,
    @Inject(PrivacyEraseService) private readonly erase: PrivacyEraseService,
    @Inject(PERSONAL_DATA_RETENTION_OPTIONS) private readonly options: PersonalDataRetentionOptions,
    @Optional() @Inject(APP_LOGGER) private readonly logger: AppLogger = silentLogger(),
  ) {
    super();
  }

  protected get autoStart(): boolean {
    return this.options.autoStart !== false;
  }

  start(): void {
    const job = CronJob.from({
      cronTime: this.options.cron ?? DEFAULT_CRON,
      onTick: () => {
        void this.tick();
      },
      ...(this.options.timeZone === undefined ? {} : { timeZone: this.options.timeZone }),
      start: false,
    });
    this.registry.addCronJob(PERSONAL_DATA_RETENTION_JOB, job);
    job.start();
    this.logger.info(
      { retentionMs: this.options.retentionMs, next: job.nextDate().toISO() },
      'personal data retention scheduled',
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.registry.doesExist('cron', PERSONAL_DATA_RETENTION_JOB)) {
      await this.registry.getCronJob(PERSONAL_DATA_RETENTION_JOB).stop();
      this.registry.deleteCronJob(PERSONAL_DATA_RETENTION_JOB);
    }
    await this.current;
  }

  /** One tick: runs unless a run of this process is still going. Never rejects. */
  tick(now: Date = new Date()): Promise<RetentionRunResult | null> {
    if (this.current !== null || this.stopped) return Promise.resolve(null);
    const run = this.run(now)
      .then((result) => {
        this.report(result);
        return result;
      })
      .catch((error: unknown) => {
        this.logger.error(
          { err: describeError(error) },
          'personal data retention run failed; the next run takes the orders again',
        );
        return null;
      })
      .finally(() => {
        this.current = null;
      });
    this.current = run;
    return run;
  }

  /** Erases, batch by batch, what the retention has expired at `now`. */
  async run(now: Date = new Date()): Promise<RetentionRunResult> {
    const cutoff = new Date(now.getTime() - this.options.retentionMs);
    const held = await this.database.whileHolding(RETENTION_LOCK, () => this.runBatches(cutoff));
    return (
      held?.value ?? {
        ran: false,
        cutoff,
        orders: 0,
        keylessLetters: 0,
        counts: NO_CHANGES,
        changed: 0,
      }
    );
  }

  private async runBatches(cutoff: Date): Promise<RetentionRunResult> {
    const counts = { ...NO_CHANGES };
    let orders = 0;
    let keylessLetters = 0;
    let changed = 0;
    for (;;) {
      if (this.stopped) break;
      const sql = this.database.sql;
      const orderIds = await this.orders.untouchedSince(sql, cutoff, BATCH);
      const keyless = await this.letters.keylessFailedBefore(sql, cutoff, BATCH);
      if (orderIds.length === 0 && keyless.length === 0) break;
      const outcome = await this.erase.eraseForRetention(orderIds, keyless, cutoff);
      for (const [store, n] of Object.entries(outcome.counts) as [keyof ErasureCounts, number][]) {
        counts[store] += n;
      }
      orders += outcome.orderIds.length;
      keylessLetters += keyless.length;
      changed += outcome.changed;
      // Only orders left for the next run (replayed events waiting) were selected: done.
      if (outcome.orderIds.length === 0 && keyless.length === 0) break;
    }
    return { ran: true, cutoff, orders, keylessLetters, counts, changed };
  }

  private report(result: RetentionRunResult): void {
    if (!result.ran) {
      this.logger.info({}, 'personal data retention skipped: another replica runs it');
      return;
    }
    this.logger.info(
      {
        cutoff: result.cutoff.toISOString(),
        orders: result.orders,
        keylessLetters: result.keylessLetters,
        changed: result.changed,
        ...result.counts,
      },
      'personal data retention run done',
    );
  }
}
