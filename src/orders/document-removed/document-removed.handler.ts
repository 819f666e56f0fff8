/** order.document_removed → DELETE /api/payments/uploadDocument/{payflow_id}/{document_id}. */
import { Inject, Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { DeletedDocument, PayflowApi } from '../../payflow/payflow.types.js';
import { DocumentRepository } from '../../payments/document.repository.js';
import { CommandRunner } from '../engine/command-runner.js';
import type { CommandSpec } from '../engine/command-spec.js';
import type { CommandOutcome } from '../engine/order-command.js';
import { mappingFailed } from '../shared/order-amounts.js';
import {
  PaymentTargets,
  callOptions,
  targetEvent,
  type PaymentTarget,
} from '../shared/payment-target.js';
import type { DocumentRemovedCommand } from './document-removed.command.js';

interface RemoveState {
  readonly target: PaymentTarget;
  readonly ref: string;
  /** documents.id */
  readonly documentRowId: string;
  readonly payflowDocumentId: string;
}

@Injectable()
export class DocumentRemovedHandler {
  private readonly spec: CommandSpec<'order.document_removed', RemoveState, DeletedDocument>;

  constructor(
    private readonly runner: CommandRunner,
    database: Database,
    targets: PaymentTargets,
    documents: DocumentRepository,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.document_removed',
      // A repeated DELETE answers 404: never repeated blindly.
      repeatable: false,
      map: async (command) => {
        const target = await targets.require(command);
        const ref = command.event.data.documentRef;
        const row = await documents.findLive(database.sql, target.payment.id, ref);
        if (row === null || row.payflowDocumentId === null) {
          throw mappingFailed(
            'ORDER.UNKNOWN_DOCUMENT_REF',
            `document reference "${ref}" is not attached to the order's payment`,
          );
        }
        return {
          state: { target, ref, documentRowId: row.id, payflowDocumentId: row.payflowDocumentId },
          paymentId: target.payment.id,
        };
      },
      call: ({ target, payflowDocumentId }, signal) =>
        payflow.deleteDocument(
          target.payment.payflowId,
          payflowDocumentId,
          callOptions(target, signal),
        ),
      complete: async (tx, { state, command }) => {
        await documents.markRemoved(tx, state.documentRowId);
        return [
          targetEvent('document.removed', command, state.target, {
            documentRef: state.ref,
            documentId: state.payflowDocumentId,
          }),
        ];
      },
    };
  }

  execute(command: DocumentRemovedCommand): Promise<CommandOutcome> {
    return this.runner.run(command, this.spec);
  }
}
