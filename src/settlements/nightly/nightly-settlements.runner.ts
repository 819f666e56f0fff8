/**
 * The nightly settlement run (issue 5): for every organization the credentials reach
 * (GET /auth/organizations) and every format, track the nights since the last one known
 * (yesterday, in SETTLEMENT_TIMEZONE, is the newest), then pull every night still missing,
 * oldest first. A night whose pull fails stays missing and is tried again on the next run;
 * a transient failure (Payflow 5xx, time-out) also ends that organization's run, so its
 * nights are caught up in date order, while a permanent one (4xx) does not hold back the
 * later nights.
 *
 * With `recheckNights` (SETTLEMENT_RECHECK_NIGHTS) N > 0, the run then asks Payflow again
 * for the organization's last N nights already pulled: a file Payflow changed since is
 * stored as a new version and published again; an unchanged one stores nothing.
 *
 * One run at a time across replicas: the run holds a session advisory lock on a dedicated
 * connection (pg_try_advisory_lock); a replica that finds it taken skips its turn. Each
 * night's pull also takes its own lock, so an operator's `settlements pull` can run at the
 * same time without two pulls of one night.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_LOGGER } from '../../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../../logging/logger.js';
import { describeError } from '../../errors/app-error.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { SettlementFormat } from '../../payflow/wire/payflow.schemas.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';
import { previousNight } from '../nights.js';
import { PullSettlementHandler, type PullResult } from '../pull/pull-settlement.handler.js';
import { SettlementReconciler } from '../reconcile/settlement-reconciler.js';
import { SettlementPullError } from '../settlement.errors.js';
import { SETTLEMENTS_OPTIONS, type SettlementsOptions } from '../settlements.options.js';
import { NightTracker } from './night-tracker.js';

export interface NightReport {
  readonly organizationId: string;
  readonly date: string;
  readonly format: string;
  readonly result: PullResult;
  /** A night pulled before, asked for again (SETTLEMENT_RECHECK_NIGHTS). */
  readonly recheck?: boolean;
}

export interface NightFailure {
  readonly organizationId: string;
  readonly date: string;
  readonly format: string;
  readonly transient: boolean;
  readonly error: string;
}

export interface NightlyRunResult {
  /** False when another run held the lock (nothing was done). */
  readonly ran: boolean;
  /** The newest night of this run (yesterday in the configured time zone). */
  readonly night: string;
  readonly organizations: number;
  readonly pulled: readonly NightReport[];
  readonly failed: readonly NightFailure[];
  /** Nights still missing after the run, over all organizations it saw. */
  readonly stillMissing: number;
  readonly durationMs: number;
}

/** A night's pull that failed: transient unless the pull said otherwise. */
function nightFailure(
  key: Pick<NightFailure, 'organizationId' | 'date' | 'format'>,
  error: unknown,
): NightFailure {
  return error instanceof SettlementPullError
    ? { ...key, transient: error.transient, error: error.reason }
    : { ...key, transient: true, error: describeError(error) };
}

@Injectable()
export class NightlySettlementsRunner {
  constructor(
    @Inject(NightTracker) private readonly nights: NightTracker,
    @Inject(PullSettlementHandler) private readonly pull: PullSettlementHandler,
    @Inject(PAYFLOW_API) private readonly payflow: PayflowApi,
    @Inject(SETTLEMENTS_OPTIONS) private readonly options: SettlementsOptions,
    @Optional() @Inject(APP_LOGGER) private readonly logger: AppLogger = silentLogger(),
    @Optional()
    @Inject(SettlementReconciler)
    private readonly reconciler?: SettlementReconciler,
  ) {}

  /** One run as of `now`; `ran: false` when another replica's run holds the lock. */
  async run(now: Date = new Date(), signal?: AbortSignal): Promise<NightlyRunResult> {
    const started = Date.now();
    const night = previousNight(now, this.options.timeZone);
    const held = await this.nights.whileRunLocked(() => this.runLocked(night, started, signal));
    return (
      held?.value ?? {
        ran: false,
        night,
        organizations: 0,
        pulled: [],
        failed: [],
        stillMissing: 0,
        durationMs: Date.now() - started,
      }
    );
  }

  private async runLocked(
    lastNight: string,
    started: number,
    signal: AbortSignal | undefined,
  ): Promise<NightlyRunResult> {
    const organizations = await this.payflow.listOrganizations(signal ? { signal } : {});
    const pulled: NightReport[] = [];
    const failed: NightFailure[] = [];
    let stillMissing = 0;
    for (const organization of organizations) {
      for (const format of this.options.formats) {
        const missing = await this.nights.missingUpTo(organization.id, format, lastNight);
        let remaining = missing.length;
        let transientFailure = false;
        for (const night of missing) {
          if (signal?.aborted === true) break;
          const key = { organizationId: organization.id, date: night.date, format };
          try {
            const result = await this.pull.execute(
              { ...key, trigger: 'cron', onlyIfMissing: true },
              undefined,
              signal,
            );
            remaining -= 1;
            if (result.outcome !== 'skipped') pulled.push({ ...key, result });
          } catch (error) {
            const failure = nightFailure(key, error);
            failed.push(failure);
            this.logger.warn(
              { ...key, attempts: night.attempts + 1, err: describeError(error) },
              'settlement night not pulled; it stays missing and is tried again next run',
            );
            if (failure.transient) {
              transientFailure = true;
              break;
            }
          }
        }
        stillMissing += remaining;
        if (!transientFailure && signal?.aborted !== true) {
          const done = new Set(pulled.map((report) => `${report.organizationId}/${report.date}`));
          await this.recheck(organization.id, format, lastNight, done, pulled, failed, signal);
        }
      }
      await this.reconcileIfIdle(organization.id, lastNight, pulled);
    }
    return {
      ran: true,
      night: lastNight,
      organizations: organizations.length,
      pulled,
      failed,
      stillMissing,
      durationMs: Date.now() - started,
    };
  }

  /**
   * Each stored night was reconciled by its pull; an organization with none this run is
   * still checked for payments paid too long ago with no line (`not_settled`), and for
   * its open findings, with its last night.
   */
  private async reconcileIfIdle(
    organizationId: string,
    lastNight: string,
    pulled: readonly NightReport[],
  ): Promise<void> {
    const stored = pulled.some(
      (report) =>
        report.organizationId === organizationId &&
        (report.result.outcome === 'stored' || report.result.outcome === 'changed'),
    );
    if (stored || this.reconciler === undefined) return;
    try {
      await this.reconciler.reconcile({ organizationId, from: lastNight, to: lastNight });
    } catch (error) {
      this.logger.warn(
        { organizationId, err: describeError(error) },
        'settlements not reconciled this run; the next run tries again',
      );
    }
  }

  /** Asks again for the last `recheckNights` nights already pulled (not those just pulled). */
  private async recheck(
    organizationId: string,
    format: SettlementFormat,
    lastNight: string,
    done: ReadonlySet<string>,
    pulled: NightReport[],
    failed: NightFailure[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const nights = await this.nights.pulledLately(
      organizationId,
      format,
      lastNight,
      this.options.recheckNights ?? 0,
    );
    for (const night of nights) {
      if (signal?.aborted === true) return;
      if (done.has(`${organizationId}/${night.date}`)) continue;
      const key = { organizationId, date: night.date, format };
      try {
        const result = await this.pull.execute({ ...key, trigger: 'cron' }, undefined, signal);
        pulled.push({ ...key, result, recheck: true });
      } catch (error) {
        const failure = nightFailure(key, error);
        failed.push(failure);
        this.logger.warn(
          { ...key, err: describeError(error) },
          'settlement night not rechecked; its stored file stays as it is',
        );
        if (failure.transient) return;
      }
    }
  }
}
