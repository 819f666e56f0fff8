/**
 * Records what a person did in the console: a row of `operator_actions` (shown on the
 * order's timeline) and a log line (`console action`), both with who, what, which order,
 * the outcome and details that name no personal data.
 */
import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER } from '../../common/logger.module.js';
import type { AppLogger } from '../../common/logger.js';
import { Database } from '../../database/database.js';
import {
  OperatorActionRepository,
  type ActionDetails,
  type ActionOutcome,
  type OperatorActionKind,
  type OperatorActionRow,
} from '../../operator/audit/operator-action.repository.js';
import type { ConsoleSession } from '../sign-in/session-store.js';

@Injectable()
export class ConsoleAudit {
  private readonly actions = new OperatorActionRepository();

  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async record(
    session: Pick<ConsoleSession, 'operator'>,
    action: OperatorActionKind,
    orderId: string | null,
    outcome: ActionOutcome,
    details: ActionDetails = {},
  ): Promise<OperatorActionRow> {
    const row = await this.actions.record(this.database.sql, {
      actor: session.operator,
      action,
      orderId,
      details,
      outcome,
    });
    this.logger.info(
      { audit: { id: row.id, actor: session.operator, action, orderId, outcome, details } },
      'console action',
    );
    return row;
  }
}
