import type { SettlementFormat } from '../../payflow/wire/payflow.schemas.js';
import type { NightKey } from '../settlement.repository.js';

/** Who asked for a pull (stored with the file). */
export type PullTrigger = 'cron' | 'cli';

/** Pull one night's settlement file of one organization. */
export interface PullSettlementCommand extends NightKey {
  readonly format: SettlementFormat;
  readonly trigger: PullTrigger;
  /**
   * The nightly run sets this: a night another process pulled meanwhile is skipped. A
   * pull by hand leaves it unset and always asks Payflow again (storing nothing when the
   * content is the same).
   */
  readonly onlyIfMissing?: boolean;
}

/** How far a pull got; reported while the file streams in. */
export interface PullProgress {
  readonly bytes: number;
  readonly rows: number;
  readonly badRows: number;
}

export type PullOutcome =
  /** First content of this night: stored as version 1 and published. */
  | 'stored'
  /** Content differed from the stored version: kept as a new version and published. */
  | 'changed'
  /** Same SHA-256 as the stored version: nothing stored, nothing published. */
  | 'unchanged'
  /** onlyIfMissing, and another process pulled the night meanwhile. */
  | 'skipped';
