/**
 * The whole loop: ERP events on Kafka (a real broker) → the worker (started as main.ts
 * starts it) → the Payflow sandbox over HTTP → Postgres → status events and dead letters
 * on Kafka.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Worker } from '../../src/worker.js';
import {
  aLine,
  anEnvelope,
  anOrderId,
  cancelledData,
  isoDay,
  paymentRequestedData,
} from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';

interface StatusEvent {
  eventId: string;
  type: string;
  orderId: string;
  paymentId: string | null;
  data: Record<string, unknown>;
}

interface SandboxPayment {
  id: string;
  body: { order: { orderNumber: string }; payment: { internalRef?: string } };
}

describe('order pipeline end to end', () => {
  let pipeline: Pipeline;
  let worker: Worker;
  let status: TopicReader;
  let dlq: TopicReader;
  let db: pg.Client;

  beforeAll(async () => {
    pipeline = await startPipeline('pipeline');
    [worker, status, dlq] = await Promise.all([
      pipeline.startWorker(),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
      TopicReader.start(pipeline.kafka, pipeline.topics.dlq),
    ]);
    db = new pg.Client({ connectionString: pipeline.database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db.end();
    await Promise.allSettled([status.stop(), dlq.stop()]);
    await pipeline.stop();
  });

  async function sandboxPayments(): Promise<SandboxPayment[]> {
    const response = await fetch(`${pipeline.sandbox.url}/sandbox/payments`);
    return ((await response.json()) as { payments: SandboxPayment[] }).payments;
  }

  it('turns a payment request into one Payflow payment and a payment.created event', async () => {
    const orderId = anOrderId();
    const envelope = anEnvelope(
      'order.payment_requested',
      paymentRequestedData({ lines: [aLine({ unitPriceNet: '1000.00', taxRate: 25 })] }),
      { orderId },
    );
    await pipeline.publish([{ key: orderId, value: envelope }]);
    await status.waitFor((messages) => messages.some((m) => m.key === orderId));
    const created = status.json<StatusEvent>().find((event) => event.orderId === orderId);
    expect(created?.type).toBe('payment.created');
    expect(created?.paymentId).toMatch(/^[0-9a-f]{24}$/);
    expect(String(created?.data.paymentLink)).toMatch(/^https:\/\/.+\/p\/[0-9a-f]{24}$/);
    const atPayflow = (await sandboxPayments()).filter(
      (p) => p.body.payment.internalRef === orderId,
    );
    expect(atPayflow).toHaveLength(1);
    expect(atPayflow[0]?.id).toBe(created?.paymentId);
  });

  it('does nothing more when the same events are delivered again', async () => {
    const orderId = anOrderId();
    const envelope = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    await pipeline.publish([{ key: orderId, value: envelope }]);
    await status.waitFor((messages) => messages.some((m) => m.key === orderId));
    await pipeline.publish([
      { key: orderId, value: envelope },
      { key: orderId, value: envelope },
    ]);
    // A later event of another order proves the redeliveries were consumed.
    const marker = anOrderId();
    await pipeline.publish([
      {
        key: marker,
        value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId: marker }),
      },
    ]);
    await status.waitFor((messages) => messages.some((m) => m.key === marker));
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM processed_events WHERE event_id = $1`,
      [envelope.eventId],
    );
    expect(Number(rows[0]?.n)).toBe(1);
    expect(
      (await sandboxPayments()).filter((p) => p.body.payment.internalRef === orderId),
    ).toHaveLength(1);
    expect(status.messages.filter((m) => m.key === orderId)).toHaveLength(1);
  });

  it('keeps one order’s events in order: create, then cancel', async () => {
    const orderId = anOrderId();
    await pipeline.publish([
      {
        key: orderId,
        value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      },
      { key: orderId, value: anEnvelope('order.cancelled', cancelledData(), { orderId }) },
    ]);
    await status.waitFor((messages) => messages.filter((m) => m.key === orderId).length >= 2);
    expect(
      status
        .json<StatusEvent>()
        .filter((e) => e.orderId === orderId)
        .map((e) => e.type),
    ).toEqual(['payment.created', 'payment.cancelled']);
  });

  it('dead-letters invalid JSON, an unknown type and an invalid event, and keeps going', async () => {
    const badJson = anOrderId('BAD');
    const unknownType = anOrderId('BAD');
    const invalid = anOrderId('BAD');
    const good = anOrderId();
    const { currency: _dropped, ...withoutCurrency } = paymentRequestedData();
    await pipeline.publish([
      { key: badJson, value: '{"eventId": nope' },
      {
        key: unknownType,
        value: {
          ...anEnvelope('order.cancelled', {}, { orderId: unknownType }),
          type: 'order.exploded',
        },
      },
      {
        key: invalid,
        value: anEnvelope('order.payment_requested', withoutCurrency as never, {
          orderId: invalid,
        }),
      },
      {
        key: good,
        value: anEnvelope(
          'order.payment_requested',
          paymentRequestedData({ dueDate: isoDay(10) }),
          { orderId: good },
        ),
      },
    ]);
    await dlq.waitFor((messages) =>
      [badJson, unknownType, invalid].every((key) => messages.some((m) => m.key === key)),
    );
    await status.waitFor((messages) => messages.some((m) => m.key === good));
    const reasonOf = (key: string) =>
      dlq.messages.find((m) => m.key === key)?.headers['x-dlq-reason'];
    expect(reasonOf(badJson)).toBe('invalid_json');
    expect(reasonOf(unknownType)).toBe('invalid_event');
    expect(reasonOf(invalid)).toBe('invalid_event');
    const letter = dlq.messages.find((m) => m.key === badJson);
    expect(letter?.value).toBe('{"eventId": nope');
    expect(letter?.headers['x-dlq-original-topic']).toBe(pipeline.topics.orders);
    expect(letter?.headers['x-dlq-attempts']).toBe('1');
    expect(Number.isNaN(Date.parse(letter?.headers['x-dlq-failed-at'] ?? ''))).toBe(false);
    expect(dlq.messages.find((m) => m.key === invalid)?.headers['x-dlq-error']).toMatch(/currency/);
  });

  it("runs against this project's sandbox shapes (standard, or alternate in the second run)", async () => {
    const response = await fetch(`${pipeline.sandbox.partnerUrl}/auth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('sandbox-client:sandbox-secret').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    const token = (await response.json()) as Record<string, unknown>;
    const alternate = process.env.TEST_SANDBOX_SHAPES === 'alternate';
    // The alternate shapes leave out expires_in (the client then assumes a lifetime).
    expect('expires_in' in token).toBe(!alternate);
    expect(typeof token.access_token).toBe('string');
  });

  it('exposes health and Prometheus metrics', async () => {
    const ready = await fetch(`${worker.managementUrl}/health/ready`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`${worker.managementUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /payflow_bridge_order_events_processed_total\{outcome="succeeded"\} [1-9]/,
    );
    expect(metrics).toMatch(/payflow_bridge_dead_letters_total\{reason="invalid_json"\} 1/);
  });
});
