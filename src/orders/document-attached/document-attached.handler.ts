/** order.document_attached → POST /api/payments/uploadDocument; emits document.attached. */
import { Inject, Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, PayflowDocument } from '../../payflow/payflow.types.js';
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
  private readonly spec: CommandSpec<'order.document_attached', AttachState, PayflowDocument>;

  constructor(
    private readonly runner: CommandRunner,
    database: Database,
    targets: PaymentTargets,
    documents: DocumentRepository,
    @Inject(PAYFLOW_API) payflow: PayflowApi,
  ) {
    this.spec = {
      type: 'order.document_attached',
      // A repeated upload would attach the document twice.
      repeatable: false,
      map: async (command) => {
        const document = mapDocumentAttached(command.event.data);
        const target = await targets.require(command);
        if ((await documents.findLive(database.sql, target.payment.id, document.ref)) !== null) {
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
      complete: async (tx, { state: { target, document }, result, command }) => {
        await documents.attach(tx, {
          paymentId: target.payment.id,
          ref: document.ref,
          payflowDocumentId: result.id,
          fileName: document.fileName,
          contentType: document.contentType,
          size: result.size,
        });
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
    return this.runner.run(command, this.spec);
  }
}
