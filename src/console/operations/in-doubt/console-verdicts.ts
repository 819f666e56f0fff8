/**
 * A verdict on a call in doubt given in the console (form: a Payflow payment id, or "never
 * created"), by the same InDoubtService and its checks against Payflow as `in-doubt
 * resolve` (the decider is the signed-in operator). A refused verdict says why, and nothing
 * changes. Every verdict, given or refused, is recorded.
 */
import { Inject, Injectable } from '@nestjs/common';
import { describeError } from '../../../errors/app-error.js';
import { InDoubtService, type Verdict } from '../../../orders/in-doubt/in-doubt.service.js';
import { ConsoleAudit } from '../../shared/console-audit.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';

/** What the last verdict did, or why it was refused. */
export interface VerdictNotice {
  readonly orderId: string;
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly lines: readonly string[];
}

/** Where the CLI's words name its flags, the console's name its buttons. */
function consoleWords(line: string): string {
  return line
    .replace(/--payment\b/g, '“Payflow has it”')
    .replace(/--not-created\b/g, '“Never created”');
}

function codeOf(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const code: unknown = Reflect.get(error, 'code');
  return typeof code === 'string' ? code : null;
}

function messageOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const message: unknown = Reflect.get(error, 'message');
    if (typeof message === 'string') return message;
  }
  return describeError(error);
}

@Injectable()
export class ConsoleVerdicts {
  constructor(
    @Inject(InDoubtService) private readonly verdicts: InDoubtService,
    @Inject(ConsoleAudit) private readonly audit: ConsoleAudit,
  ) {}

  /** The verdict given in the form, checked, carried out and recorded; what it did. */
  async decide(
    session: ConsoleSession,
    orderId: string,
    paymentId: string,
    notCreated: boolean,
  ): Promise<VerdictNotice> {
    const refuse = async (why: string, code: string): Promise<VerdictNotice> => {
      await this.audit.record(session, 'verdict', orderId, 'refused', { why: code });
      return { orderId, outcome: 'refused', lines: [why] };
    };
    if (paymentId !== '' && notCreated) {
      return refuse(
        'Give one verdict: either the Payflow payment id, or “never created”. Nothing changed.',
        'CONSOLE.TWO_VERDICTS',
      );
    }
    if (paymentId === '' && !notCreated) {
      return refuse(
        'Give a verdict: the Payflow payment id you found, or “never created”. Nothing changed.',
        'CONSOLE.NO_VERDICT',
      );
    }
    if (paymentId.length > 100 || /\s/.test(paymentId)) {
      return refuse('That is not a Payflow payment id. Nothing changed.', 'CONSOLE.BAD_PAYMENT_ID');
    }
    const verdict: Verdict = notCreated
      ? { kind: 'not_created' }
      : { kind: 'payment_found', payflowId: paymentId };
    const details = {
      verdict: verdict.kind,
      payflowId: verdict.kind === 'payment_found' ? verdict.payflowId : null,
    };
    try {
      const outcome = await this.verdicts.resolve({
        orderId,
        verdict,
        decidedBy: `${session.operator} (console)`,
      });
      await this.audit.record(session, 'verdict', orderId, 'done', {
        ...details,
        result: outcome.kind,
        replayedMessages: outcome.replayed?.messages ?? 0,
      });
      return { orderId, outcome: 'done', lines: outcome.lines.map(consoleWords) };
    } catch (error) {
      const code = codeOf(error);
      if (code?.startsWith('IN_DOUBT.') === true) {
        await this.audit.record(session, 'verdict', orderId, 'refused', { ...details, why: code });
        return { orderId, outcome: 'refused', lines: [consoleWords(messageOf(error))] };
      }
      await this.audit.record(session, 'verdict', orderId, 'failed', {
        ...details,
        error: describeError(error),
      });
      return {
        orderId,
        outcome: 'failed',
        lines: [`The verdict could not be completed: ${describeError(error)}`],
      };
    }
  }
}
