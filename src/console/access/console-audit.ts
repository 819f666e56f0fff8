/**
 * Records what a person did in the console: a row of `operator_actions` (shown on the
 * order's timeline) and a log line (`console action`), both with who, what, which order,
 * the outcome and details that name no personal data. "Who" is the provider's display name
 * and subject for an OpenID sign-in (verified), or the name typed at the token sign-in
 * (unverified); the row also keeps the client's address. The log line names the actor's
 * subject and whether it is verified, never an e-mail address or a token.
 */
import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { Database } from '../../database/database.js';
import {
  OperatorActionRepository,
  type ActionDetails,
  type ActionOutcome,
  type OperatorActionKind,
  type OperatorActionRow,
} from '../../operator/audit/operator-action.repository.js';
import type { ConsoleSession } from '../sign-in/session-store.js';

/** Who the audit names: a session, or whoever tried to sign in. */
export type AuditActor = Pick<
  ConsoleSession,
  'operator' | 'subject' | 'verified' | 'clientAddress'
>;

@Injectable()
export class ConsoleAudit {
  private readonly actions = new OperatorActionRepository();

  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async record(
    session: AuditActor,
    action: OperatorActionKind,
    orderId: string | null,
    outcome: ActionOutcome,
    details: ActionDetails = {},
  ): Promise<OperatorActionRow> {
    const row = await this.actions.record(this.database.sql, {
      actor: session.operator,
      actorSubject: session.subject,
      actorVerified: session.verified,
      clientAddress: session.clientAddress,
      action,
      orderId,
      details,
      outcome,
    });
    this.logger.info(
      {
        audit: {
          id: row.id,
          actor: session.operator,
          subject: session.subject,
          verified: session.verified,
          action,
          orderId,
          outcome,
          details,
        },
      },
      'console action',
    );
    return row;
  }
}
