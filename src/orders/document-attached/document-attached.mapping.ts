/** order.document_attached → POST /api/payments/uploadDocument (JSON with base64 content). */
import type { UploadDocumentInput } from '../../payflow/payflow.types.js';
import { mappingFailed } from '../mapping/order-amounts.js';
import type { OrderEventData } from '../../events/order-event.schema.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface MappedDocument {
  readonly ref: string;
  readonly fileName: string;
  readonly contentType: string;
  readonly contentBase64: string;
  /** Decoded size in bytes. */
  readonly size: number;
}

/** Line breaks and spaces in the base64 text are dropped; anything else that is not base64 is mapping_failed. */
export function mapDocumentAttached(
  data: OrderEventData<'order.document_attached'>,
): MappedDocument {
  const contentBase64 = data.contentBase64.replace(/\s+/g, '');
  if (contentBase64.length % 4 !== 0 || !BASE64.test(contentBase64)) {
    throw mappingFailed(
      'ORDER.INVALID_DOCUMENT',
      `document ${data.documentRef}: contentBase64 is not valid base64`,
    );
  }
  return {
    ref: data.documentRef,
    fileName: data.fileName,
    contentType: data.contentType,
    contentBase64,
    size: Buffer.byteLength(contentBase64, 'base64'),
  };
}

export function toUploadInput(paymentId: string, document: MappedDocument): UploadDocumentInput {
  return {
    paymentId,
    fileName: document.fileName,
    contentType: document.contentType,
    contentBase64: document.contentBase64,
  };
}
