/**
 * The cron trigger of the nightly run: registered with @nestjs/schedule's SchedulerRegistry
 * at bootstrap, from SETTLEMENT_CRON in SETTLEMENT_TIMEZONE (a dynamic job: the decorator
 * form takes only a constant). A tick that comes while this process's previous run is
 * still going is skipped; the runner's advisory lock keeps other replicas out. Shutdown
 * stops the job, aborts the run's Payflow calls and waits for it (what a pull had not
 * committed is rolled back, and the night stays missing). The relay is woken by each
 * night's pull (PullSettlementHandler, through OutboxCommitted), not by the run.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { BackgroundWorker } from '../../concurrency/background-worker.js';
import { APP_LOGGER } from '../../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../../logging/logger.js';
import { describeError } from '../../errors/app-error.js';
import { SETTLEMENTS_OPTIONS, type SettlementsOptions } from '../settlements.options.js';
import { NightlySettlementsRunner, type NightlyRunResult } from './nightly-settlements.runner.js';

export const NIGHTLY_SETTLEMENTS_JOB = 'nightly-settlements';
export const SETTLEMENT_METRICS = Symbol('SETTLEMENT_METRICS');

/** What a nightly run reports to monitoring (the worker's prom-client registry). */
export interface SettlementMetrics {
  nightlyRun(result: NightlyRunResult): void;
  nightlyRunFailed(): void;
}

@Injectable()
export class NightlySettlementsCron extends BackgroundWorker {
  private readonly abort = new AbortController();
  private current: Promise<NightlyRunResult | null> | null = null;
  private readonly listeners = new Set<(result: NightlyRunResult) => void>();

  constructor(
    @Inject(SchedulerRegistry) private readonly registry: SchedulerRegistry,
    @Inject(NightlySettlementsRunner) private readonly runner: NightlySettlementsRunner,
    @Inject(SETTLEMENTS_OPTIONS) private readonly options: SettlementsOptions,
    @Optional() @Inject(APP_LOGGER) private readonly logger: AppLogger = silentLogger(),
    @Optional() @Inject(SETTLEMENT_METRICS) private readonly metrics?: SettlementMetrics,
  ) {
    super();
  }

  protected get autoStart(): boolean {
    return this.options.autoStart !== false;
  }

  /** Registers the cron job and starts it. */
  start(): void {
    const job = CronJob.from({
      cronTime: this.options.cron,
      onTick: () => {
        void this.tick();
      },
      timeZone: this.options.timeZone,
      start: false,
    });
    this.registry.addCronJob(NIGHTLY_SETTLEMENTS_JOB, job);
    job.start();
    this.logger.info(
      { cron: this.options.cron, timeZone: this.options.timeZone, next: job.nextDate().toISO() },
      'nightly settlement pull scheduled',
    );
  }

  /** Stops the cron job, aborts the run under way and waits for it. */
  async stop(): Promise<void> {
    if (this.registry.doesExist('cron', NIGHTLY_SETTLEMENTS_JOB)) {
      await this.registry.getCronJob(NIGHTLY_SETTLEMENTS_JOB).stop();
      this.registry.deleteCronJob(NIGHTLY_SETTLEMENTS_JOB);
    }
    this.abort.abort();
    await this.current;
  }

  /** Tells `listener` about each finished run (tests, metrics). */
  onRun(listener: (result: NightlyRunResult) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One tick: runs unless a run of this process is still going. Never rejects. */
  tick(now: Date = new Date()): Promise<NightlyRunResult | null> {
    if (this.current !== null || this.abort.signal.aborted) return Promise.resolve(null);
    const run = this.runner
      .run(now, this.abort.signal)
      .then((result) => {
        this.report(result);
        return result;
      })
      .catch((error: unknown) => {
        this.metrics?.nightlyRunFailed();
        this.logger.error(
          { err: describeError(error) },
          'nightly settlement run failed; missing nights are tried again next run',
        );
        return null;
      })
      .finally(() => {
        this.current = null;
      });
    this.current = run;
    return run;
  }

  private report(result: NightlyRunResult): void {
    if (result.ran) {
      this.metrics?.nightlyRun(result);
      this.logger.info(
        {
          night: result.night,
          organizations: result.organizations,
          pulled: result.pulled.length,
          failed: result.failed.length,
          stillMissing: result.stillMissing,
          durationMs: result.durationMs,
        },
        'nightly settlement run done',
      );
    } else {
      this.logger.info(
        { night: result.night },
        'nightly settlement run skipped: another replica runs it',
      );
    }
    for (const listener of this.listeners) listener(result);
  }
}
