import { describe, expect, it } from '@jest/globals';
import { anEvent, documentAttachedData } from '../../../test/support/builders.js';
import { mapDocumentAttached, toUploadInput } from './document-attached.mapping.js';

describe('mapDocumentAttached', () => {
  it('keeps the document, drops whitespace in the base64 and knows the size', () => {
    const content = Buffer.from('hello document');
    const base64 = content.toString('base64');
    const event = anEvent(
      'order.document_attached',
      documentAttachedData({
        documentRef: 'doc-1',
        contentBase64: `${base64.slice(0, 8)}\n${base64.slice(8)}`,
      }),
    );
    const mapped = mapDocumentAttached(event.data);
    expect(mapped).toEqual({
      ref: 'doc-1',
      fileName: 'invoice.pdf',
      contentType: 'application/pdf',
      contentBase64: base64,
      size: content.length,
    });
    expect(toUploadInput('pay-1', mapped)).toEqual({
      paymentId: 'pay-1',
      fileName: 'invoice.pdf',
      contentType: 'application/pdf',
      contentBase64: base64,
    });
  });

  it('refuses content that is not base64', () => {
    const event = anEvent(
      'order.document_attached',
      documentAttachedData({ documentRef: 'doc-2', contentBase64: 'not base64!' }),
    );
    expect(() => mapDocumentAttached(event.data)).toThrow(
      'document doc-2: contentBase64 is not valid base64',
    );
  });
});
