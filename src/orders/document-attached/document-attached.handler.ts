/** order.document_attached → POST /api/payments/uploadDocument; emits document.attached. */
import { Inject, Injectable } from '@nestjs/common';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, PayflowDocument } from '../../payflow/payflow.types.js';
import { OrderCommandEngine, type CommandSpec } from '../common/command-engine.js';
import type { CommandOutcome } from '../common/order-command.js';
import { mappingFailed } from '../common/order-amounts.js';
import {
  callOptions,
  requirePayment,
  targetEvent,
  type PaymentTarget,
} from '../common/payment-target.js';
import type { DocumentAttachedCommand } from './document-attached.command.js';
import {
  mapDocumentAttached,
  toUploadInput,
  type MappedDocument,
} from './document-attached.mapping.js';

interface AttachState {
  readonly target: PaymentTarget;
  readonly document: MappedDocument;
}

@Injectable()
export class DocumentAttachedHandler {
  private readonly spec: CommandSpec<
    'order.document_attached',
    MappedDocument,
    AttachState,
    PayflowDocument
  >;

  constructor(
    private readonly engine: OrderCommandEngine,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.document_attached',
      // A repeated upload would attach the document twice.
      repeatable: false,
      map: (command) => mapDocumentAttached(command.event.data),
      prepare: async (tx, context) => {
        const target = requirePayment(context);
        const document = context.mapped;
        const existing = await tx.query(
          `SELECT 1 FROM documents
            WHERE payment_id = $1::uuid AND document_ref = $2 AND removed_at IS NULL`,
          [target.payment.id, document.ref],
        );
        if (existing.length > 0) {
          throw mappingFailed(
            'ORDER.DUPLICATE_DOCUMENT_REF',
            `document reference "${document.ref}" is already attached to the order's payment`,
          );
        }
        return { state: { target, document }, paymentId: target.payment.id };
      },
      call: ({ target, document }, signal) =>
        payflow.uploadDocument(
          toUploadInput(target.payment.payflowId, document),
          callOptions(target, signal),
        ),
      complete: async (tx, { target, document }, result, command) => {
        await tx.execute(
          `INSERT INTO documents (payment_id, document_ref, payflow_document_id, file_name,
                                  content_type, size)
           VALUES ($1::uuid, $2, $3, $4, $5, $6)
           ON CONFLICT (payment_id, document_ref) DO UPDATE
              SET payflow_document_id = EXCLUDED.payflow_document_id,
                  file_name = EXCLUDED.file_name, content_type = EXCLUDED.content_type,
                  size = EXCLUDED.size, removed_at = NULL, updated_at = now()`,
          [
            target.payment.id,
            document.ref,
            result.id,
            document.fileName,
            document.contentType,
            result.size,
          ],
        );
        return [
          targetEvent('document.attached', command, target, {
            documentRef: document.ref,
            documentId: result.id,
            fileName: document.fileName,
            contentType: document.contentType,
            size: result.size,
          }),
        ];
      },
    };
  }

  execute(command: DocumentAttachedCommand): Promise<CommandOutcome> {
    return this.engine.run(command, this.spec);
  }
}
