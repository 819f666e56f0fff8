/**
 * A discard given in the console (`POST /console/dead-letters/{eventId}/discard`, form:
 * `reason`), by the same DeadLetterDiscardService and rules as `dlq discard` (the person
 * is the signed-in operator). A refused discard says why, and nothing changes. Every
 * discard, done or refused, is recorded; the details name the event and what happened,
 * never the reason's text (it is kept with the letter and in `event.discarded`).
 */
import { Inject, Injectable } from '@nestjs/common';
import { describeError } from '../../../errors/app-error.js';
import { DeadLetterDiscardService } from '../../../dead-letters/discard/dead-letter-discard.service.js';
import {
  InvalidDiscardInputError,
  parseDiscardEventId,
  parseDiscardReason,
} from '../../../dead-letters/discard/discard-input.js';
import { DiscardRefusedError } from '../../../dead-letters/discard/discard.errors.js';
import { ConsoleAudit } from '../../shared/console-audit.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';

/** What the last discard did, or why it was refused. */
export interface DiscardNotice {
  readonly eventId: string;
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly lines: readonly string[];
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

  /** The discard asked for in the form, checked, carried out and recorded; what it did. */
  async discard(
    session: ConsoleSession,
    eventIdText: string,
    reasonText: string,
  ): Promise<DiscardNotice> {
    const shown = eventIdText.slice(0, 100);
    let eventId: string;
    let reason: string;
    try {
      eventId = parseDiscardEventId(eventIdText);
      reason = parseDiscardReason(reasonText);
    } catch (error) {
      if (!(error instanceof InvalidDiscardInputError)) throw error;
      await this.audit.record(session, 'discard', null, 'refused', {
        eventId: shown,
        why: error.code,
      });
      return { eventId: shown, outcome: 'refused', lines: [`${error.message}. Nothing changed.`] };
    }
    try {
      const outcome = await this.discards.discard({
        eventId,
        reason,
        discardedBy: `${session.operator} (console)`,
      });
      const letter = outcome.kind === 'already' ? outcome.letter : outcome.effect.letters[0];
      await this.audit.record(session, 'discard', letter?.orderId ?? null, 'done', {
        eventId,
        result: outcome.kind,
        deadLetterReason: letter?.reason ?? null,
        republished: outcome.kind === 'discarded' ? outcome.effect.republished.length : 0,
      });
      return { eventId, outcome: 'done', lines: outcome.lines };
    } catch (error) {
      if (error instanceof DiscardRefusedError) {
        await this.audit.record(
          session,
          'discard',
          typeof error.metadata.orderId === 'string' ? error.metadata.orderId : null,
          'refused',
          { eventId, why: error.code },
        );
        return { eventId, outcome: 'refused', lines: [consoleWords(error.message)] };
      }
      await this.audit.record(session, 'discard', null, 'failed', {
        eventId,
        error: describeError(error),
      });
      return {
        eventId,
        outcome: 'failed',
        lines: [`The discard could not be completed: ${describeError(error)}`],
      };
    }
  }
}
