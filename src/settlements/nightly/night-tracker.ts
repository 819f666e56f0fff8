/**
 * The nights the nightly run owes a pull, as settlement_nights keeps them: the run's lock,
 * the nights it starts to track (every one after the newest it knows, up to the run's last
 * night), those still missing, and those pulled lately that it asks for again. The run
 * decides what to pull and in which order; this is where its nights are read and written.
 */
import { Inject, Injectable } from '@nestjs/common';
import { addDays } from '../../timing/calendar.js';
import { Database } from '../../database/database.js';
import { nightsToTrack } from '../nights.js';
import { SettlementRepository, type NightRow } from '../settlement.repository.js';

/** pg_try_advisory_lock(namespace, key) of the nightly run. */
export const NIGHTLY_RUN_LOCK = { namespace: 0x73746c01, key: 1 } as const;

@Injectable()
export class NightTracker {
  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(SettlementRepository) private readonly settlements: SettlementRepository,
  ) {}

  /**
   * Runs `work` holding the nightly run's session lock (one run at a time across
   * replicas); null, with nothing done, when another run holds it.
   */
  whileRunLocked<T>(work: () => Promise<T>): Promise<{ value: T } | null> {
    return this.database.whileHolding(NIGHTLY_RUN_LOCK, work);
  }

  /**
   * Tracks the nights after the newest one tracked, up to `lastNight`, then returns the
   * nights still missing up to `lastNight`, oldest first.
   */
  async missingUpTo(
    organizationId: string,
    format: string,
    lastNight: string,
  ): Promise<NightRow[]> {
    const sql = this.database.sql;
    const newest = await this.settlements.newestNight(sql, organizationId, format);
    await this.settlements.trackNights(
      sql,
      organizationId,
      format,
      nightsToTrack(newest, lastNight),
    );
    const missing = await this.settlements.missingNights(sql, organizationId, format);
    return missing.filter((night) => night.date <= lastNight);
  }

  /** The last `count` nights up to `lastNight` that were pulled already, oldest first. */
  async pulledLately(
    organizationId: string,
    format: string,
    lastNight: string,
    count: number,
  ): Promise<NightRow[]> {
    if (count <= 0) return [];
    const range = { from: addDays(lastNight, -(count - 1)), to: lastNight };
    return this.settlements.pulledNights(this.database.sql, organizationId, format, range);
  }
}
