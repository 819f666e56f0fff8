/**
 * A discard given in the console (`POST /console/dead-letters/{eventId}/discard`, form:
 * `reason`), by the same DeadLetterDiscardService and rules as `dlq discard` (the person
 * is the signed-in operator). A refused discard says why, and nothing changes. Every
 * discard, done, refused or failed, is recorded; the details name the event and what
 * happened, never the reason's text (it is kept with the letter and in `event.discarded`).
 */
import { Inject, Injectable } from '@nestjs/common';
import { describeError } from '../../../errors/app-error.js';
import {
  DeadLetterDiscardService,
  type DiscardOutcome,
} from '../../../dead-letters/discard/dead-letter-discard.service.js';
import {
  InvalidDiscardInputError,
  parseDiscardEventId,
  parseDiscardReason,
} from '../../../dead-letters/discard/discard-input.js';
import { DiscardRefusedError } from '../../../dead-letters/discard/discard.errors.js';
import type {
  ActionDetails,
  ActionOutcome,
} from '../../../operator/audit/operator-action.repository.js';
import { ConsoleAudit } from '../../access/console-audit.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';

/** What the last discard did, or why it was refused. */
export interface DiscardNotice {
  readonly eventId: string;
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly lines: readonly string[];
}

/** The discard form's fields as sent. */
export interface DiscardForm {
  readonly reason: string;
}

/** Checks the route's event id and the form: throws InvalidDiscardInputError for either. */
function parseDiscardForm(
  eventIdText: string,
  form: DiscardForm,
): { readonly eventId: string; readonly reason: string } {
  return { eventId: parseDiscardEventId(eventIdText), reason: parseDiscardReason(form.reason) };
}

/** Where the CLI's words name its commands, the console's name its pages. */
function consoleWords(line: string): string {
  return line.replace(/in-doubt resolve (\S+)/g, 'in-doubt resolve $1 (the In doubt page)');
}

@Injectable()
export class ConsoleDiscards {
  constructor(
    @Inject(DeadLetterDiscardService) private readonly discards: DeadLetterDiscardService,
    @Inject(ConsoleAudit) private readonly audit: ConsoleAudit,
  ) {}

  /**
   * The discard asked for in the form, for the signed-in operator (the session guard let
   * only an operator's POST through): the form checked, the discard carried out, recorded,
   * and described.
   */
  async discard(
    session: ConsoleSession,
    eventIdText: string,
    form: DiscardForm,
  ): Promise<DiscardNotice> {
    let eventId: string;
    let reason: string;
    try {
      ({ eventId, reason } = parseDiscardForm(eventIdText, form));
    } catch (error) {
      if (!(error instanceof InvalidDiscardInputError)) throw error;
      // The id as sent, cut short: it may be anything, and the page and the audit repeat it.
      const shown = eventIdText.slice(0, 100);
      await this.record(session, null, 'refused', { eventId: shown, why: error.code });
      return { eventId: shown, outcome: 'refused', lines: [`${error.message}. Nothing changed.`] };
    }
    let outcome: DiscardOutcome;
    try {
      outcome = await this.discards.discard({
        eventId,
        reason,
        discardedBy: `${session.operator} (console)`,
      });
    } catch (error) {
      if (error instanceof DiscardRefusedError) {
        const orderId = typeof error.metadata.orderId === 'string' ? error.metadata.orderId : null;
        await this.record(session, orderId, 'refused', { eventId, why: error.code });
        return { eventId, outcome: 'refused', lines: [consoleWords(error.message)] };
      }
      await this.record(session, null, 'failed', { eventId, error: describeError(error) });
      return {
        eventId,
        outcome: 'failed',
        lines: [`The discard could not be completed: ${describeError(error)}`],
      };
    }
    const letter = outcome.kind === 'already' ? outcome.letter : outcome.effect.letters[0];
    await this.record(session, letter?.orderId ?? null, 'done', {
      eventId,
      result: outcome.kind,
      deadLetterReason: letter?.reason ?? null,
      republished: outcome.kind === 'discarded' ? outcome.effect.republished.length : 0,
    });
    return { eventId, outcome: 'done', lines: outcome.lines };
  }

  /** The audit row of this discard (`discard`): the event and what happened, never the reason. */
  private async record(
    session: ConsoleSession,
    orderId: string | null,
    outcome: ActionOutcome,
    details: ActionDetails,
  ): Promise<void> {
    await this.audit.record(session, 'discard', orderId, outcome, details);
  }
}
