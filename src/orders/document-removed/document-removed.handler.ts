/** order.document_removed → DELETE /api/payments/uploadDocument/{payflow_id}/{document_id}. */
import { Injectable } from '@nestjs/common';
import type { DeletedDocument } from '../../payflow/payflow.types.js';
import { DocumentRepository } from '../../payments/document.repository.js';
import { mappingFailed } from '../shared/order-amounts.js';
import { PaymentCommandHandler, PaymentCommandKit } from '../shared/payment-command.js';
import { targetEvent } from '../shared/payment-target.js';
import { documentRemovedVerdict } from './document-removed.probe.js';

interface RemoveState {
  readonly ref: string;
  /** documents.id */
  readonly documentRowId: string;
  readonly payflowDocumentId: string;
}

@Injectable()
export class DocumentRemovedHandler extends PaymentCommandHandler<
  'order.document_removed',
  RemoveState,
  DeletedDocument
> {
  constructor(kit: PaymentCommandKit, documents: DocumentRepository) {
    super(kit, {
      type: 'order.document_removed',
      // A repeated DELETE answers 404: never repeated blindly.
      repeatable: false,
      map: async (command, target) => {
        const ref = command.event.data.documentRef;
        const row = await documents.findLive(kit.database.sql, target.payment.id, ref);
        if (row === null || row.payflowDocumentId === null) {
          throw mappingFailed(
            'ORDER.UNKNOWN_DOCUMENT_REF',
            `document reference "${ref}" is not attached to the order's payment`,
          );
        }
        return { ref, documentRowId: row.id, payflowDocumentId: row.payflowDocumentId };
      },
      call: ({ target, payflowDocumentId }, options) =>
        kit.payflow.deleteDocument(target.payment.payflowId, payflowDocumentId, options),
      probe: async ({ target, payflowDocumentId }, options) =>
        documentRemovedVerdict(
          await kit.payflow.getPaymentStatus(target.payment.payflowId, {
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
