/** order.document_attached → POST /api/payments/uploadDocument; emits document.attached. */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Registry } from 'prom-client';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import type { PayflowDocument } from '../../payflow/payflow.types.js';
import { DocumentRepository } from '../../payments/document.repository.js';
import { UnexplainedEffects } from '../../payments/unexplained-effects/unexplained-effects.service.js';
import { mappingFailed } from '../mapping/order-amounts.js';
import { onLatestPayment, type OnTarget } from '../latest-payment/on-latest-payment.js';
import { targetEvent, PaymentTargets } from '../latest-payment/payment-target.js';
import {
  mapDocumentAttached,
  toUploadInput,
  type MappedDocument,
} from './document-attached.mapping.js';
import { documentAttachedVerdict } from './document-attached.probe.js';
import type { CommandSpec, OrderEventHandler } from '../engine/command-spec.js';
import { Database } from '../../database/database.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';

interface AttachState {
  readonly document: MappedDocument;
}

@Injectable()
export class DocumentAttachedHandler implements OrderEventHandler<'order.document_attached'> {
  readonly spec: CommandSpec<'order.document_attached', OnTarget<AttachState>, PayflowDocument>;

  constructor(
    targets: PaymentTargets,
    database: Database,
    @Inject(PayflowClient) payflow: PayflowApi,
    documents: DocumentRepository,
    @Optional() @Inject(APP_LOGGER) logger?: AppLogger,
    @Optional() @Inject(Registry) registry?: Registry,
  ) {
    // Built here over the kit's database: OrdersModule provides no UnexplainedEffects.
    const effects = UnexplainedEffects.create(database.sql, logger, registry);
    this.spec = onLatestPayment(targets, {
      type: 'order.document_attached',
      // A repeated upload would attach the document twice.
      repeatable: false,
      before: (command) => mapDocumentAttached(command.event.data),
      map: async (_command, target, document) => {
        if ((await documents.findLive(database.sql, target.payment.id, document.ref)) !== null) {
          throw mappingFailed(
            'ORDER.DUPLICATE_DOCUMENT_REF',
            `document reference "${document.ref}" is already attached to the order's payment`,
          );
        }
        return { document };
      },
      call: ({ target, document }, options) =>
        payflow.uploadDocument(toUploadInput(target.payment.payflowId, document), options),
      probe: async ({ target, document }, options) => {
        const status = await payflow.getPaymentStatus(target.payment.payflowId, {
          ...options,
          currency: target.payment.currency,
        });
        // This attempt is live, so the read is checked only for the other kind of effect.
        await effects.check(target.payment, status, 'probe');
        const known = await documents.listForPayments(database.sql, [target.payment.id]);
        return documentAttachedVerdict(
          status,
          document,
          new Set(known.flatMap((row) => row.payflowDocumentId ?? [])),
        );
      },
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
    });
  }
}
