/** order.document_removed → DELETE /api/payments/uploadDocument/{payflow_id}/{document_id}. */
import { Inject, Injectable } from '@nestjs/common';
import type { DeletedDocument } from '../../payflow/payflow.types.js';
import { DocumentRepository } from '../../payments/document.repository.js';
import { mappingFailed } from '../mapping/order-amounts.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import { documentRemovedVerdict } from './document-removed.probe.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { Database } from '../../database/database.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

interface RemoveState {
  readonly ref: string;
  /** documents.id */
  readonly documentRowId: string;
  readonly payflowDocumentId: string;
}

@Injectable()
export class DocumentRemovedHandler implements OrderEventHandler<'order.document_removed'> {
  readonly spec: CommandSpec<'order.document_removed', OnTarget<RemoveState>, DeletedDocument>;

  constructor(
    targets: PaymentTargets,
    database: Database,
    @Inject(PayflowClient) payflow: PayflowApi,
    documents: DocumentRepository,
  ) {
    this.spec = onLatestPayment(targets, {
      type: 'order.document_removed',
      // A repeated DELETE answers 404: never repeated blindly.
      repeatable: false,
      map: async (command, target) => {
        const ref = command.event.data.documentRef;
        const row = await documents.findLive(database.sql, target.payment.id, ref);
        if (row === null || row.payflowDocumentId === null) {
          throw mappingFailed(
            'ORDER.UNKNOWN_DOCUMENT_REF',
            `document reference "${ref}" is not attached to the order's payment`,
          );
        }
        return { ref, documentRowId: row.id, payflowDocumentId: row.payflowDocumentId };
      },
      call: ({ target, payflowDocumentId }, options) =>
        payflow.deleteDocument(target.payment.payflowId, payflowDocumentId, options),
      probe: async ({ target, payflowDocumentId }, options) =>
        documentRemovedVerdict(
          await payflow.getPaymentStatus(target.payment.payflowId, {
            ...options,
            currency: target.payment.currency,
          }),
          payflowDocumentId,
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
    });
  }
}
