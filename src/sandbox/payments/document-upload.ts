/**
 * POST /api/payments/uploadDocument in either of its two shapes (docs/assumptions.md,
 * documents): JSON `{ paymentId, fileName, contentType, contentBase64 }`, which the bridge
 * sends, or multipart/form-data with a `paymentId` field and a `file` part, whose file
 * name and Content-Type become fileName and contentType. Both become one DocumentUpload.
 */
import { z } from 'zod';
import { uploadDocumentSchema } from '../../payflow/wire/payflow.schemas.js';
import { parseOr422, unprocessable, type Loc } from '../http/errors.js';
import { MultipartForm } from '../http/media-types.js';

export interface DocumentUpload {
  paymentId: string;
  fileName: string;
  contentType: string;
  /** Where the content was, for errors about it. */
  contentLoc: Loc;
  /** The content's bytes; a 422 for invalid base64 (checked after the payment is found). */
  content(): Buffer;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const multipartSchema = z.object({
  paymentId: z.string().min(1),
  file: z.object({
    fileName: z.string().min(1).max(255),
    contentType: z.string().min(1).max(255),
    bytes: z.instanceof(Buffer),
  }),
});

export function readDocumentUpload(body: unknown): DocumentUpload {
  if (body instanceof MultipartForm) {
    const form = parseOr422(
      multipartSchema,
      {
        paymentId: body.fields.get('paymentId') ?? body.files.get('paymentId'),
        file: body.files.get('file') ?? body.fields.get('file'),
      },
      'body',
    );
    return {
      paymentId: form.paymentId,
      fileName: form.file.fileName,
      contentType: form.file.contentType,
      contentLoc: ['body', 'file'],
      content: () => form.file.bytes,
    };
  }
  const json = parseOr422(uploadDocumentSchema, body, 'body');
  return {
    paymentId: json.paymentId,
    fileName: json.fileName,
    contentType: json.contentType,
    contentLoc: ['body', 'contentBase64'],
    content: () => {
      const text = json.contentBase64.replace(/\s+/g, '');
      if (text.length % 4 !== 0 || !BASE64.test(text)) {
        throw unprocessable([
          {
            loc: ['body', 'contentBase64'],
            msg: 'is not valid base64',
            type: 'value_error.base64',
          },
        ]);
      }
      return Buffer.from(text, 'base64');
    },
  };
}
