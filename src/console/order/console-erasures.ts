/**
 * An erasure asked for on an order's page (`POST /console/orders/{orderId}/privacy/erase`,
 * form: `confirm=erase`), by the same PrivacyEraseService and rules as `privacy erase
 * --order` (the person is the signed-in operator). The answer says how many rows changed,
 * or that nothing was left to erase (and when and by whom it was erased before), or why it
 * was refused (PRIVACY.REPLAY_PENDING: nothing changed). Every erasure, done, refused or
 * failed, is recorded (`erase_personal_data`) with counts and codes, never a value.
 */
import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { AppError, describeError } from '../../errors/app-error.js';
import type {
  ActionDetails,
  ActionOutcome,
} from '../../operator/audit/operator-action.repository.js';
import {
  ErasureRefusedError,
  PrivacyEraseService,
  type ErasureOutcome,
} from '../../privacy/erase/privacy-erase.service.js';
import { ConsoleAudit } from '../access/console-audit.js';
import type { ConsoleSession } from '../sign-in/session-store.js';

/** What the erasure just asked for did, or why it did not. */
export interface ErasureNotice {
  readonly outcome: 'done' | 'nothing' | 'refused' | 'failed';
  readonly lines: readonly string[];
}

/** The route's order id. */
export const erasureOrderIdSchema = z.string().trim().min(1).max(200);

/** The erasure form's fields as sent. */
export interface ErasureForm {
  readonly confirm: string;
}

/** The form: the person confirmed (the checkbox, or the button after the browser's question). */
const erasureFormSchema = z.object({ confirm: z.literal('erase') });

/** The form was sent without its confirmation: nothing was erased. */
export class ErasureNotConfirmedError extends AppError {
  readonly code = 'CONSOLE.ERASE_NOT_CONFIRMED';
  readonly transient = false;
  constructor() {
    super('the erasure was not confirmed (tick “Yes, erase”)');
  }
}

/** Checks the form: throws ErasureNotConfirmedError without the confirmation. */
function parseErasureForm(form: ErasureForm): void {
  if (!erasureFormSchema.safeParse(form).success) throw new ErasureNotConfirmedError();
}

/** The stores that changed, in words ("dead letters 1, outbox rows 2"). */
function describeCounts(counts: ErasureOutcome['counts']): string {
  const names: Record<keyof ErasureOutcome['counts'], string> = {
    deadLetters: 'dead letters',
    outbox: 'outbox rows',
    webhooks: 'webhooks',
    customerNumbers: 'customer numbers',
    paymentLinks: 'payment links',
    documentNames: 'document file names',
    effectFileNames: 'file names of unexplained effects',
  };
  return (Object.keys(names) as (keyof typeof names)[])
    .filter((store) => counts[store] > 0)
    .map((store) => `${names[store]} ${counts[store]}`)
    .join(', ');
}

@Injectable()
export class ConsoleErasures {
  constructor(
    @Inject(PrivacyEraseService) private readonly erasures: PrivacyEraseService,
    @Inject(ConsoleAudit) private readonly audit: ConsoleAudit,
  ) {}

  /**
   * The erasure asked for in the form, for the signed-in operator (the session guard let
   * only an operator's POST through): the form checked, the erasure carried out, recorded,
   * and described.
   */
  async erase(session: ConsoleSession, orderId: string, form: ErasureForm): Promise<ErasureNotice> {
    try {
      parseErasureForm(form);
    } catch (error) {
      if (!(error instanceof ErasureNotConfirmedError)) throw error;
      await this.record(session, orderId, 'refused', { why: error.code });
      return { outcome: 'refused', lines: [`Not erased: ${error.message}. Nothing changed.`] };
    }
    let outcome: ErasureOutcome;
    try {
      outcome = await this.erasures.erase({
        selection: { kind: 'order', orderId },
        erasedBy: `${session.operator} (console)`,
      });
    } catch (error) {
      if (error instanceof ErasureRefusedError) {
        await this.record(session, orderId, 'refused', { why: error.code });
        return {
          outcome: 'refused',
          lines: [
            `Not erased (${error.code}): a replayed event of this order still waits in the ` +
              'outbox to be published, and erased it would reach the pipeline with “[erased]” ' +
              'in it. Nothing changed; ask again in a few seconds, once it is published.',
          ],
        };
      }
      await this.record(session, orderId, 'failed', { error: describeError(error) });
      return {
        outcome: 'failed',
        lines: [`The erasure could not be completed: ${describeError(error)}. Nothing changed.`],
      };
    }
    const { counts, changed, record, previous } = outcome;
    await this.record(session, orderId, 'done', {
      result: changed > 0 ? 'erased' : 'nothing_left',
      changed,
      ...counts,
      erasure: record?.id ?? null,
      erasedBefore: changed > 0 ? null : (previous?.id ?? null),
    });
    if (changed > 0) {
      return {
        outcome: 'done',
        lines: [
          `Erased the personal data of order ${orderId}: ${changed} row(s) changed (${describeCounts(counts)}).`,
          `Recorded as erasure #${record?.id ?? '?'}. Erased dead letters can no longer be replayed.`,
        ],
      };
    }
    return {
      outcome: 'nothing',
      lines: [
        previous === null
          ? `Nothing to erase: the bridge holds no personal data of order ${orderId}.`
          : `Nothing left to erase: erased on ${previous.erasedAt.toISOString()} by ${previous.erasedBy} (erasure #${previous.id}).`,
      ],
    };
  }

  /** The audit row of this erasure (`erase_personal_data`): counts and codes, never a value. */
  private async record(
    session: ConsoleSession,
    orderId: string,
    outcome: ActionOutcome,
    details: ActionDetails,
  ): Promise<void> {
    await this.audit.record(session, 'erase_personal_data', orderId, outcome, details);
  }
}
