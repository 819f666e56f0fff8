import type { SettlementFormat } from '../payflow/payflow.schemas.js';

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
  /** Register the cron job with the application. Default true. */
  readonly autoStart?: boolean;
}

export const SETTLEMENTS_OPTIONS = Symbol('SETTLEMENTS_OPTIONS');
