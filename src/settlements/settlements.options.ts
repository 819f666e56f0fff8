import type { SettlementFormat } from '../payflow/wire/payflow.schemas.js';

/** Settings of the settlements feature, from the configuration (and tests). */
export interface SettlementsOptions {
  /** TOPIC_SETTLEMENTS. */
  readonly topic: string;
  /** SETTLEMENT_CRON (six fields, seconds first). */
  readonly cron: string;
  /** SETTLEMENT_TIMEZONE (IANA). */
  readonly timeZone: string;
  /** Formats pulled every night. Payflow's sandbox knows `standard` only. */
  readonly formats: readonly SettlementFormat[];
  /**
   * SETTLEMENT_RECHECK_NIGHTS: the nightly run also asks again for this many of the latest
   * nights already pulled, so that a file Payflow changed later is found. Default 0.
   */
  readonly recheckNights?: number;
  /** Register the cron job with the application. Default true. */
  readonly autoStart?: boolean;
}

export const SETTLEMENTS_OPTIONS = Symbol('SETTLEMENTS_OPTIONS');
