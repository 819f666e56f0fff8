import { describe, expect, it } from '@jest/globals';
import { decodeDocumentContent, uploadDocumentMultipart } from './payflow.multipart.js';

const PDF = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x0d, 0x0a, 0x80]);

describe('uploadDocumentMultipart', () => {
  it('encodes paymentId and the file with its name, type and exact bytes', async () => {
    const body = {
      paymentId: 'a'.repeat(24),
      fileName: 'faktura "mars".pdf',
      contentType: 'application/pdf',
      contentBase64: PDF.toString('base64'),
    };
    const encoded = await uploadDocumentMultipart(body, decodeDocumentContent(body.contentBase64));
    expect(encoded.contentType).toMatch(/^multipart\/form-data; boundary=\S+$/);
    const form = await new Response(encoded.bytes, {
      headers: { 'content-type': encoded.contentType },
    }).formData();
    expect([...form.keys()]).toEqual(['paymentId', 'file']);
    expect(form.get('paymentId')).toBe(body.paymentId);
    const file = form.get('file');
    expect(file).toBeInstanceOf(File);
    const sent = file as File;
    expect(sent.name).toBe(body.fileName);
    expect(sent.type).toBe('application/pdf');
    expect(Buffer.from(await sent.arrayBuffer())).toEqual(PDF);
  });
});

describe('decodeDocumentContent', () => {
  it('decodes base64, ignoring line breaks', () => {
    const text = PDF.toString('base64');
    expect(decodeDocumentContent(`${text.slice(0, 4)}\n${text.slice(4)}`)).toEqual(PDF);
  });

  it.each(['not base64!', 'abc', 'ab=c'])('refuses %p without showing it', (text) => {
    expect(() => decodeDocumentContent(text)).toThrow(/^contentBase64 is not valid base64$/);
  });
});
