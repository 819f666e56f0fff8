/** order.document_removed → DELETE /api/payments/uploadDocument/{payflow_id}/{document_id}. */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { DeletedDocument, PayflowApi } from '../../payflow/payflow.types.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import type { CommandOutcome } from '../common/order-command.js';
import { mappingFailed } from '../common/order-amounts.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
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
  private readonly spec: CommandSpec<'order.document_removed', null, RemoveState, DeletedDocument>;

  constructor(
    private readonly engine: OrderCommandEngine,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.document_removed',
      // A repeated DELETE answers 404: never repeated blindly.
      repeatable: false,
      map: () => null,
      prepare: async (tx, context) => {
        const target = requirePayment(context);
        const ref = context.command.event.data.documentRef;
        const [row] = await tx.query<{ id: string; payflow_document_id: string | null }>(
          `SELECT id, payflow_document_id FROM documents
            WHERE payment_id = $1::uuid AND document_ref = $2 AND removed_at IS NULL`,
          [target.payment.id, ref],
        );
        if (row === undefined || row.payflow_document_id === null) {
          throw mappingFailed(
            'ORDER.UNKNOWN_DOCUMENT_REF',
            `document reference "${ref}" is not attached to the order's payment`,
          );
        }
        return {
          state: {
            target,
            ref,
            documentRowId: row.id,
            payflowDocumentId: row.payflow_document_id,
          },
          paymentId: target.payment.id,
        };
      },
      call: ({ target, payflowDocumentId }, signal) =>
        payflow.deleteDocument(
          target.payment.payflowId,
          payflowDocumentId,
          callOptions(target, signal),
        ),
      complete: async (tx, state, _result, command) => {
        await tx.execute(
          `UPDATE documents SET removed_at = now(), updated_at = now() WHERE id = $1::uuid`,
          [state.documentRowId],
        );
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
    return this.engine.run(command, this.spec);
  }
}
