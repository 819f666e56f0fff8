/**
 * The multipart/form-data body of uploadDocument (PAYFLOW_DOCUMENT_UPLOAD=multipart): the field
 * `paymentId` and the field `file`, which carries the decoded document with its file name and
 * content type. Encoded by the platform's FormData (undici, as fetch encodes it) into bytes,
 * so the request goes through the client's one exchange path like every JSON body.
 */
import type { UploadDocumentBody } from './payflow.schemas.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface MultipartBody {
  readonly bytes: Buffer;
  /** `multipart/form-data; boundary=…` */
  readonly contentType: string;
}

/** The document's bytes; refuses text that is not base64 (the message never shows content). */
export function decodeDocumentContent(contentBase64: string): Buffer {
  const text = contentBase64.replace(/\s+/g, '');
  if (text.length % 4 !== 0 || !BASE64.test(text)) {
    throw new Error('contentBase64 is not valid base64');
  }
  return Buffer.from(text, 'base64');
}

export async function uploadDocumentMultipart(
  body: UploadDocumentBody,
  content: Uint8Array,
): Promise<MultipartBody> {
  const form = new FormData();
  form.append('paymentId', body.paymentId);
  form.append('file', new Blob([content], { type: body.contentType }), body.fileName);
  const encoded = new Response(form);
  const contentType = encoded.headers.get('content-type');
  if (contentType === null || !contentType.startsWith('multipart/form-data')) {
    throw new Error('the form could not be encoded as multipart/form-data');
  }
  return { bytes: Buffer.from(await encoded.arrayBuffer()), contentType };
}
