/**
 * What a person does to a settlement night in the console: "pull again", one night by the
 * handler `settlements pull` runs (a pull by hand: it always asks Payflow, stores a file
 * only when its content is new, and publishes it through the outbox), only for nights that
 * are over, as the CLI allows; and "forget", giving up a missing night as `settlements
 * forget` does. Each is recorded, refused ones too.
 */
import { Inject, Injectable } from '@nestjs/common';
import { describeError } from '../../../errors/app-error.js';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { Database } from '../../../database/database.js';
import type { SettlementFormat } from '../../../payflow/wire/payflow.schemas.js';
import { previousNight } from '../../../settlements/nights.js';
import { PullSettlementHandler } from '../../../settlements/pull/pull-settlement.handler.js';
import { SettlementRepository } from '../../../settlements/settlement.repository.js';
import { ConsoleAudit } from '../../access/console-audit.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';

export interface SettlementNotice {
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly lines: readonly string[];
}

/** The night a form names. */
export interface NightForm {
  readonly organizationId: string;
  readonly date: string;
  readonly format: SettlementFormat;
}

@Injectable()
export class ConsoleNightActions {
  constructor(
    @Inject(PullSettlementHandler) private readonly pulls: PullSettlementHandler,
    @Inject(SettlementRepository) private readonly settlements: SettlementRepository,
    @Inject(Database) private readonly database: Database,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'SETTLEMENT_TIMEZONE'>,
    @Inject(ConsoleAudit) private readonly audit: ConsoleAudit,
  ) {}

  /** A pull by hand of a night that is over (as `settlements pull`); what it did. */
  async pull(session: ConsoleSession, night: NightForm): Promise<SettlementNotice> {
    const lastNight = previousNight(new Date(), this.config.SETTLEMENT_TIMEZONE);
    if (night.date > lastNight) {
      return this.refuse(
        session,
        'pull',
        `${night.date} is not over yet: the newest complete night is ${lastNight}. Nothing was pulled.`,
        night,
      );
    }
    const label = `${night.organizationId} ${night.date} ${night.format}`;
    try {
      // A night that stored events wakes the relay itself (OutboxCommitted, in PullSettlementHandler).
      const result = await this.pulls.execute({ ...night, trigger: 'cli' });
      const file = result.file;
      const what =
        result.outcome === 'unchanged'
          ? 'Payflow’s file is the same as the one stored: nothing stored, nothing published.'
          : result.outcome === 'changed'
            ? `Payflow’s file changed: stored as version ${file?.version ?? '?'} (${file?.rows ?? 0} rows, ${file?.badRows ?? 0} unreadable), and published.`
            : result.outcome === 'stored'
              ? `Stored (${file?.rows ?? 0} rows, ${file?.badRows ?? 0} unreadable) and published.`
              : 'Another pull took it meanwhile.';
      await this.audit.record(session, 'pull', null, 'done', {
        organizationId: night.organizationId,
        night: night.date,
        format: night.format,
        result: result.outcome,
      });
      return { outcome: 'done', lines: [`Pulled ${label}: ${result.outcome}.`, what] };
    } catch (error) {
      const reason = describeError(error);
      await this.audit.record(session, 'pull', null, 'failed', {
        organizationId: night.organizationId,
        night: night.date,
        format: night.format,
        error: reason,
      });
      return {
        outcome: 'failed',
        lines: [
          `Could not pull ${label}: ${reason}`,
          'The night is marked missing; the nightly run tries it again.',
        ],
      };
    }
  }

  /** Gives up the night where it is missing (as `settlements forget`); what it did. */
  async forget(session: ConsoleSession, night: NightForm): Promise<SettlementNotice> {
    const results = await this.settlements.forgetNights(
      this.database.sql,
      night.date,
      night.organizationId,
      night.format,
    );
    const changed = results.filter((entry) => entry.forgotten).length;
    const lines =
      results.length === 0
        ? [`No night of ${night.organizationId} is tracked for ${night.date}: nothing to forget.`]
        : results.map(({ night: row, forgotten }) =>
            forgotten
              ? `${row.organizationId} ${row.date} ${row.format}: forgotten (was missing after ${row.attempts} attempt(s)); no run asks Payflow for it again.`
              : `${row.organizationId} ${row.date} ${row.format}: left as it is (${row.status}, not missing).`,
          );
    await this.audit.record(session, 'forget', null, changed > 0 ? 'done' : 'refused', {
      organizationId: night.organizationId,
      night: night.date,
      format: night.format,
      forgotten: changed,
    });
    return { outcome: changed > 0 ? 'done' : 'refused', lines };
  }

  /** A refused form (why), recorded. */
  async refuse(
    session: ConsoleSession,
    action: 'pull' | 'forget',
    why: string,
    night: NightForm | null = null,
  ): Promise<SettlementNotice> {
    await this.audit.record(session, action, null, 'refused', {
      organizationId: night?.organizationId ?? null,
      night: night?.date ?? null,
      why,
    });
    return { outcome: 'refused', lines: [why] };
  }
}
