/**
 * PAYFLOW_DOCUMENT_UPLOAD=multipart against the real sandbox over HTTP: the document the
 * client sends as multipart/form-data is stored with its name, content type and exact bytes,
 * and answers like a JSON upload. (The wire format itself is checked field by field against
 * the fake in lenient-shapes.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { PayflowClient } from '../../src/payflow/payflow.client.js';
import type { PayflowDocumentUpload } from '../../src/payflow/payflow.types.js';
import {
  SANDBOX_CLIENT_ID,
  SANDBOX_CLIENT_SECRET,
  sandboxControl,
  startTestSandbox,
  type SandboxHandle,
} from '../support/sandbox.js';

let sandbox: SandboxHandle;
const clients: PayflowClient[] = [];

function makeClient(documentUpload: PayflowDocumentUpload): PayflowClient {
  const client = new PayflowClient({
    baseUrl: sandbox.url,
    partnerBaseUrl: sandbox.partnerUrl,
    clientId: SANDBOX_CLIENT_ID,
    clientSecret: SANDBOX_CLIENT_SECRET,
    documentUpload,
  });
  clients.push(client);
  return client;
}

interface SandboxDocument {
  id: string;
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
});

afterAll(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await sandbox.close();
});

describe('uploadDocument as multipart/form-data against the sandbox', () => {
  it.each<PayflowDocumentUpload>(['multipart', 'json'])(
    '%s: the document is stored byte for byte',
    async (mode) => {
      const client = makeClient(mode);
      const created = await client.createPayment({
        customer: { type: 'person', firstName: 'Kari' },
        order: { orderNumber: `SO-${mode}`, objects: [] },
        payment: {
          currency: 'NOK',
          totalGrossAmountMinor: 12_500,
          totalNetAmountMinor: 10_000,
          dueDate: new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10),
        },
      });
      const bytes = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x2d, 0x00, 0xff, 0x80, 0x0d, 0x0a]);
      const uploaded = await client.uploadDocument({
        paymentId: created.id,
        fileName: `kvittering ${mode}.pdf`,
        contentType: 'application/pdf',
        contentBase64: bytes.toString('base64'),
      });
      expect(uploaded).toMatchObject({
        paymentId: created.id,
        fileName: `kvittering ${mode}.pdf`,
        contentType: 'application/pdf',
        size: bytes.length,
      });
      const { payments } = await sandboxControl<{
        payments: { id: string; documents: SandboxDocument[] }[];
      }>(sandbox, 'GET', '/payments');
      const stored = payments.find((payment) => payment.id === created.id)?.documents;
      expect(stored).toEqual([
        expect.objectContaining({
          id: uploaded.id,
          fileName: `kvittering ${mode}.pdf`,
          contentType: 'application/pdf',
          size: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
        }),
      ]);
      const status = await client.getPaymentStatus(created.id);
      expect(status.files.map((file) => file.id)).toEqual([uploaded.id]);
    },
  );
});
