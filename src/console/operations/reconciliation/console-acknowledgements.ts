/**
 * A settlement finding acknowledged in the console (`POST /console/reconciliation/findings/
 * {id}/acknowledge`, form: `reason`), by the same SettlementReconciler.acknowledge as
 * `settlements acknowledge` (the person is the signed-in operator): the finding is closed
 * and not opened again while its amounts stay the same. A refused acknowledgement says why,
 * and nothing changes. Every one, done, refused or failed, is recorded
 * (`acknowledge_finding`); the details name the finding and what happened, never the
 * reason's text (it is kept with the finding, shown on the page).
 */
import { Inject, Injectable } from '@nestjs/common';
import { ValidationError, describeError } from '../../../errors/app-error.js';
import type {
  ActionDetails,
  ActionOutcome,
} from '../../../operator/audit/operator-action.repository.js';
import { SettlementReconciler } from '../../../settlements/reconcile/settlement-reconciler.js';
import { ConsoleAudit } from '../../access/console-audit.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';

/** What the last acknowledgement did, or why it was refused. */
export interface AcknowledgeNotice {
  readonly findingId: string;
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly lines: readonly string[];
}

/** The acknowledge form's fields as sent. */
export interface AcknowledgeForm {
  readonly reason: string;
}

/** At most this many characters of reason (as `settlements acknowledge --reason`). */
export const ACKNOWLEDGE_REASON_MAX = 500;

/** A form the person must correct: no finding id that can be one, or no reason. */
class InvalidAcknowledgeFormError extends ValidationError {}

/** Checks the route's finding id and the form; throws InvalidAcknowledgeFormError for either. */
function parseAcknowledgeForm(
  findingIdText: string,
  form: AcknowledgeForm,
): { readonly findingId: string; readonly reason: string } {
  if (!/^\d{1,18}$/.test(findingIdText)) {
    throw new InvalidAcknowledgeFormError(
      'CONSOLE.BAD_FINDING_ID',
      'That is not a settlement finding’s id (a number)',
    );
  }
  // One line: control characters (new lines among them) become spaces.
  const reason = form.reason
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (reason.length === 0 || [...reason].length > ACKNOWLEDGE_REASON_MAX) {
    throw new InvalidAcknowledgeFormError(
      'CONSOLE.NO_REASON',
      `Give a reason of 1 to ${ACKNOWLEDGE_REASON_MAX} characters: why the finding needs nothing more`,
    );
  }
  return { findingId: findingIdText, reason };
}

@Injectable()
export class ConsoleAcknowledgements {
  constructor(
    @Inject(SettlementReconciler) private readonly reconciler: SettlementReconciler,
    @Inject(ConsoleAudit) private readonly audit: ConsoleAudit,
  ) {}

  /**
   * The acknowledgement asked for in the form, for the signed-in operator (the session
   * guard let only an operator's POST through): the form checked, the finding closed,
   * recorded, and described.
   */
  async acknowledge(
    session: ConsoleSession,
    findingIdText: string,
    form: AcknowledgeForm,
  ): Promise<AcknowledgeNotice> {
    let findingId: string;
    let reason: string;
    try {
      ({ findingId, reason } = parseAcknowledgeForm(findingIdText, form));
    } catch (error) {
      if (!(error instanceof InvalidAcknowledgeFormError)) throw error;
      // The id as sent, cut short: it may be anything, and the page and the audit repeat it.
      const shown = findingIdText.slice(0, 100);
      await this.record(session, null, 'refused', { findingId: shown, why: error.code });
      return {
        findingId: shown,
        outcome: 'refused',
        lines: [`${error.message}. Nothing changed.`],
      };
    }
    let outcome: Awaited<ReturnType<SettlementReconciler['acknowledge']>>;
    try {
      outcome = await this.reconciler.acknowledge(
        findingId,
        reason,
        `${session.operator} (console)`,
      );
    } catch (error) {
      await this.record(session, null, 'failed', { findingId, error: describeError(error) });
      return {
        findingId,
        outcome: 'failed',
        lines: [`The acknowledgement could not be completed: ${describeError(error)}`],
      };
    }
    if (outcome === null) {
      await this.record(session, null, 'refused', { findingId, why: 'CONSOLE.NO_FINDING' });
      return {
        findingId,
        outcome: 'refused',
        lines: [`There is no settlement finding ${findingId}. Nothing changed.`],
      };
    }
    const { finding } = outcome;
    await this.record(session, finding.orderId, 'done', {
      findingId,
      kind: finding.kind,
      paymentId: finding.payflowPaymentId,
      result: outcome.changed ? 'acknowledged' : 'already_closed',
      via: 'console',
    });
    return {
      findingId,
      outcome: 'done',
      lines: [
        outcome.changed
          ? `Finding ${findingId} (${finding.kind}, payment ${finding.payflowPaymentId}) acknowledged: it is closed, and not opened again while its amounts stay the same.`
          : `Finding ${findingId} was already closed (${finding.closedHow ?? 'closed'}${
              finding.closedBy === null ? '' : ` by ${finding.closedBy}`
            }); nothing changed.`,
      ],
    };
  }

  /** The audit row (`acknowledge_finding`): the finding and what happened, never the reason. */
  private async record(
    session: ConsoleSession,
    orderId: string | null,
    outcome: ActionOutcome,
    details: ActionDetails,
  ): Promise<void> {
    await this.audit.record(session, 'acknowledge_finding', orderId, outcome, details);
  }
}
