/**
 * Large events on real Kafka: an `order.document_attached` with a 5 MiB document (an event
 * of ~6.7 MiB, base64) is consumed, uploaded whole to the sandbox, and, when it cannot take
 * effect, copied whole to the dead-letter topic; a burst of them under a small
 * MAX_IN_FLIGHT_BYTES completes without ever holding more than the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { InboundEventsTransport } from '../../src/messaging/transport/inbound-events.transport.js';
import type { Worker } from '../../src/worker.js';
import {
  anEnvelope,
  anOrderId,
  documentAttachedData,
  paymentRequestedData,
} from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';

const MIB = 1024 * 1024;
const DOCUMENT_BYTES = 5 * MIB;

interface SandboxPayment {
  body: { payment: { internalRef?: string } };
  documents: { fileName: string; size: number; sha256: string }[];
}

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

async function sandboxDocuments(pipeline: Pipeline): Promise<Map<string, SandboxPayment>> {
  const response = await fetch(`${pipeline.sandbox.url}/sandbox/payments`);
  const { payments } = (await response.json()) as { payments: SandboxPayment[] };
  return new Map(payments.map((payment) => [payment.body.payment.internalRef ?? '', payment]));
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A payment for the order, then a document of DOCUMENT_BYTES random bytes. */
function orderWithDocument(orderId: string, documentRef = 'big') {
  const content = randomBytes(DOCUMENT_BYTES);
  const document = anEnvelope(
    'order.document_attached',
    documentAttachedData({
      documentRef,
      fileName: `${orderId}.pdf`,
      contentBase64: content.toString('base64'),
    }),
    { orderId },
  );
  return {
    content,
    document,
    payment: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
  };
}

describe('large order events', () => {
  let pipeline: Pipeline;
  let dlq: TopicReader;
  let worker: Worker | undefined;

  beforeAll(async () => {
    pipeline = await startPipeline('large_doc');
    dlq = await TopicReader.start(pipeline.kafka, pipeline.topics.dlq);
  });

  afterAll(async () => {
    await dlq.stop().catch(() => undefined);
    await pipeline.stop();
  });

  it('uploads a 5 MiB document whole and dead-letters a refused one whole', async () => {
    worker = await pipeline.startWorker();
    const orderId = anOrderId('BIG');
    const { content, document, payment } = orderWithDocument(orderId);
    // The same document reference again: refused (mapping_failed), so dead-lettered.
    const again = { ...document, eventId: randomUUID() };
    const againValue = JSON.stringify(again);
    expect(againValue.length).toBeGreaterThan(6.5 * MIB);
    await pipeline.publish([
      { key: orderId, value: payment },
      { key: orderId, value: document },
      { key: orderId, value: againValue },
    ]);

    await waitFor(
      async () => ((await sandboxDocuments(pipeline)).get(orderId)?.documents.length ?? 0) > 0,
      60_000,
    );
    const [uploaded] = (await sandboxDocuments(pipeline)).get(orderId)?.documents ?? [];
    expect(uploaded).toMatchObject({ size: DOCUMENT_BYTES, sha256: sha256(content) });

    await dlq.waitFor((messages) => messages.some((m) => m.key === orderId), 60_000);
    const letter = dlq.messages.find((m) => m.key === orderId);
    expect(letter?.headers['x-dlq-reason']).toBe('mapping_failed');
    expect(letter?.value.length).toBe(againValue.length);
    expect(sha256(letter?.value ?? '')).toBe(sha256(againValue));
    await worker.shutdown();
    worker = undefined;
  }, 120_000);

  it('holds no more than MAX_IN_FLIGHT_BYTES during a burst of large documents', async () => {
    const bound = 8 * MIB;
    worker = await pipeline.startWorker({}, { MAX_IN_FLIGHT_BYTES: bound });
    const orders = Array.from({ length: 4 }, () => anOrderId('BURST'));
    const built = orders.map((orderId) => orderWithDocument(orderId));
    await pipeline.publish(built.map(({ payment }) => ({ key: payment.orderId, value: payment })));
    for (const { document } of built) {
      await pipeline.publish([{ key: document.orderId, value: document }]);
    }

    await waitFor(async () => {
      const remote = await sandboxDocuments(pipeline);
      return orders.every((orderId) => (remote.get(orderId)?.documents.length ?? 0) > 0);
    }, 90_000);
    const remote = await sandboxDocuments(pipeline);
    built.forEach(({ content }, index) => {
      expect(remote.get(orders[index] ?? '')?.documents[0]).toMatchObject({
        size: DOCUMENT_BYTES,
        sha256: sha256(content),
      });
    });
    const stats = worker.app.get(InboundEventsTransport).stats();
    // It held a whole document event at some moment, never two.
    expect(stats.peakHeldBytes).toBeGreaterThan(6.5 * MIB);
    expect(stats.peakHeldBytes).toBeLessThanOrEqual(bound);
    expect(stats.waitsForRoom).toBeGreaterThan(0);
    await worker.shutdown();
  }, 150_000);
});
