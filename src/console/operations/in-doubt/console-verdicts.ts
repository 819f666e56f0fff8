/**
 * A verdict on a call in doubt given in the console (`POST /console/in-doubt/{orderId}/resolve`,
 * form: `paymentId`, or `notCreated`), by the same InDoubtService and its checks against
 * Payflow as `in-doubt resolve` (the decider is the signed-in operator). A refused verdict
 * says why, and nothing changes. Every verdict, done, refused or failed, is recorded.
 */
import { Inject, Injectable } from '@nestjs/common';
import { ValidationError, describeError } from '../../../errors/app-error.js';
import type {
  ActionDetails,
  ActionOutcome,
} from '../../../operator/audit/operator-action.repository.js';
import { InDoubtRefusedError } from '../../../orders/in-doubt/in-doubt.errors.js';
import {
  InDoubtService,
  type ResolveOutcome,
  type Verdict,
} from '../../../orders/in-doubt/in-doubt.service.js';
import { ConsoleAudit } from '../../access/console-audit.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';

/** What the last verdict did, or why it was refused. */
export interface VerdictNotice {
  readonly orderId: string;
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly lines: readonly string[];
}

/** The verdict form's fields as sent (`notCreated`: the "never created" button, any text). */
export interface VerdictForm {
  readonly paymentId: string;
  readonly notCreated: string;
}

/** A verdict form the person must correct: none, both, or no payment id. */
class InvalidVerdictFormError extends ValidationError {}

/** Checks the form: one verdict, and a payment id that can be one; else InvalidVerdictFormError. */
function parseVerdictForm(form: VerdictForm): Verdict {
  const paymentId = form.paymentId.trim();
  const notCreated = form.notCreated.trim() !== '';
  if (paymentId !== '' && notCreated) {
    throw new InvalidVerdictFormError(
      'CONSOLE.TWO_VERDICTS',
      'Give one verdict: either the Payflow payment id, or “never created”',
    );
  }
  if (paymentId === '' && !notCreated) {
    throw new InvalidVerdictFormError(
      'CONSOLE.NO_VERDICT',
      'Give a verdict: the Payflow payment id you found, or “never created”',
    );
  }
  if (paymentId.length > 100 || /\s/.test(paymentId)) {
    throw new InvalidVerdictFormError('CONSOLE.BAD_PAYMENT_ID', 'That is not a Payflow payment id');
  }
  return notCreated ? { kind: 'not_created' } : { kind: 'payment_found', payflowId: paymentId };
}

/** Where the CLI's words name its flags, the console's name its buttons. */
function consoleWords(line: string): string {
  return line
    .replace(/--payment\b/g, '“Payflow has it”')
    .replace(/--not-created\b/g, '“Never created”');
}

@Injectable()
export class ConsoleVerdicts {
  constructor(
    @Inject(InDoubtService) private readonly verdicts: InDoubtService,
    @Inject(ConsoleAudit) private readonly audit: ConsoleAudit,
  ) {}

  /**
   * The verdict given in the form, for the signed-in operator (the session guard let only
   * an operator's POST through): the form checked, the verdict carried out, recorded, and
   * described.
   */
  async resolve(
    session: ConsoleSession,
    orderId: string,
    form: VerdictForm,
  ): Promise<VerdictNotice> {
    let verdict: Verdict;
    try {
      verdict = parseVerdictForm(form);
    } catch (error) {
      if (!(error instanceof InvalidVerdictFormError)) throw error;
      await this.record(session, orderId, 'refused', { why: error.code });
      return { orderId, outcome: 'refused', lines: [`${error.message}. Nothing changed.`] };
    }
    // From here on, each row of the audit names the verdict that was checked.
    const decided = {
      verdict: verdict.kind,
      payflowId: verdict.kind === 'payment_found' ? verdict.payflowId : null,
    };
    let outcome: ResolveOutcome;
    try {
      outcome = await this.verdicts.resolve({
        orderId,
        verdict,
        decidedBy: `${session.operator} (console)`,
      });
    } catch (error) {
      if (error instanceof InDoubtRefusedError) {
        await this.record(session, orderId, 'refused', { ...decided, why: error.code });
        return { orderId, outcome: 'refused', lines: [consoleWords(error.message)] };
      }
      await this.record(session, orderId, 'failed', { ...decided, error: describeError(error) });
      return {
        orderId,
        outcome: 'failed',
        lines: [`The verdict could not be completed: ${describeError(error)}`],
      };
    }
    await this.record(session, orderId, 'done', {
      ...decided,
      result: outcome.kind,
      replayedMessages: outcome.replayed?.messages ?? 0,
    });
    return { orderId, outcome: 'done', lines: outcome.lines.map(consoleWords) };
  }

  /** The audit row of this verdict (`verdict`): what was decided and what came of it. */
  private async record(
    session: ConsoleSession,
    orderId: string,
    outcome: ActionOutcome,
    details: ActionDetails,
  ): Promise<void> {
    await this.audit.record(session, 'verdict', orderId, outcome, details);
  }
}
