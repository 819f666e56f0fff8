/**
 * The console's settlement nights: every tracked night of a date range, by organization,
 * each `pulled` (a file stored), `changed` (pulled, and Payflow's file changed after a
 * first pull: version 2 or more), `missing` (owed, not pulled yet: the nightly run tries it
 * again) or `forgotten` (given up by a person). The same nights and the same default range
 * as `settlements status` (the last 31 days up to today in SETTLEMENT_TIMEZONE); the SQL
 * is SettlementRepository's.
 */
import { Inject, Injectable } from '@nestjs/common';
import { addDays, dateIn } from '../../timing/calendar.js';
import { Database } from '../../database/database.js';
import {
  SettlementRepository,
  type NightWithFile,
} from '../../settlements/settlement.repository.js';
import { sanitizeText } from '../masking/sanitize-text.js';

export type NightState = 'pulled' | 'changed' | 'missing' | 'forgotten';

export interface NightItem {
  readonly organizationId: string;
  readonly date: string;
  readonly format: string;
  readonly state: NightState;
  readonly attempts: number;
  readonly lastAttemptAt: string | null;
  /** Why the last attempt failed (a missing night), one line. */
  readonly lastError: string | null;
  readonly pulledAt: string | null;
  readonly fileId: string | null;
  readonly version: number | null;
  readonly rows: number | null;
  readonly badRows: number | null;
}

export interface OrganizationNights {
  readonly organizationId: string;
  /** Newest night first. */
  readonly nights: readonly NightItem[];
  readonly counts: Readonly<Record<NightState, number>>;
}

export interface NightRange {
  readonly from: string;
  readonly to: string;
  readonly organizationId: string | null;
}

/** `settlements status`'s default: the 31 days up to today in `timeZone`. */
export function defaultNightRange(now: Date, timeZone: string): { from: string; to: string } {
  const to = dateIn(now, timeZone);
  return { from: addDays(to, -30), to };
}

/** A night's state by the rule of `settlements status`, with `changed` told apart. */
export function nightState(night: Pick<NightWithFile, 'status' | 'version'>): NightState {
  if (night.status === 'pulled') return (night.version ?? 1) > 1 ? 'changed' : 'pulled';
  return night.status;
}

export function nightItem(night: NightWithFile): NightItem {
  return {
    organizationId: night.organizationId,
    date: night.date,
    format: night.format,
    state: nightState(night),
    attempts: night.attempts,
    lastAttemptAt: night.lastAttemptAt?.toISOString() ?? null,
    lastError:
      night.status === 'missing' && night.lastError !== null ? sanitizeText(night.lastError) : null,
    pulledAt: night.pulledAt?.toISOString() ?? null,
    fileId: night.fileId,
    version: night.version,
    rows: night.rowCount,
    badRows: night.badRowCount,
  };
}

@Injectable()
export class SettlementNightsQuery {
  private readonly settlements = new SettlementRepository();

  constructor(@Inject(Database) private readonly database: Pick<Database, 'sql'>) {}

  /** The tracked nights of the range, grouped by organization (in id order). */
  async byOrganization(range: NightRange): Promise<OrganizationNights[]> {
    const nights = await this.settlements.nightsWithFiles(this.database.sql, range);
    const groups = new Map<string, NightItem[]>();
    for (const night of nights.map(nightItem)) {
      const list = groups.get(night.organizationId);
      if (list === undefined) groups.set(night.organizationId, [night]);
      else list.push(night);
    }
    return [...groups.entries()].map(([organizationId, items]) => {
      const counts: Record<NightState, number> = {
        pulled: 0,
        changed: 0,
        missing: 0,
        forgotten: 0,
      };
      for (const night of items) counts[night.state] += 1;
      return { organizationId, nights: items, counts };
    });
  }

  /** The night pulled most recently, or null when none was. */
  async lastPulled(): Promise<NightItem | null> {
    const night = await this.settlements.lastPulled(this.database.sql);
    return night === null ? null : nightItem(night);
  }
}
