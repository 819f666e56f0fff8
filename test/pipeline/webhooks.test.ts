/**
 * Payflow's webhooks end to end over real HTTPS: the worker serves TLS with a certificate
 * made here, the sandbox trusts it and delivers by Payflow's rules, and the status events
 * come out on Kafka. Duplicates, out-of-order deliveries, a receiver that is down while
 * Payflow retries, a callback domain that is not whitelisted (the poller finds the change)
 * and a crash between storing and processing a webhook.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Worker } from '../../src/worker.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import { selfSignedTls } from '../support/tls.js';

interface StatusEvent {
  type: string;
  orderId: string;
  paymentId: string | null;
  data: Record<string, unknown>;
}

interface Delivery {
  id: string;
  url: string;
  kind: string;
  delivered: boolean;
  held?: boolean;
  attempts: { at: string; status: number }[];
  payload: { paymentId: string; paymentStatus: string };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

describe('webhooks end to end', () => {
  let pipeline: Pipeline;
  let worker: Worker | undefined;
  let status: TopicReader;
  let db: pg.Client;
  let port: number;

  const control = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${pipeline.sandbox.url}/sandbox${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (response.status >= 300)
      throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const deliveries = async (paymentId: string) =>
    (await control<{ deliveries: Delivery[] }>('GET', '/webhook-deliveries')).deliveries.filter(
      (delivery) => delivery.payload.paymentId === paymentId,
    );
  const eventsOf = (orderId: string, type = 'payment.status_changed') =>
    status.json<StatusEvent>().filter((event) => event.orderId === orderId && event.type === type);

  async function createPayment(orderId: string): Promise<string> {
    await pipeline.publish([
      {
        key: orderId,
        value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      },
    ]);
    await status.waitFor((messages) => messages.some((m) => m.key === orderId));
    const created = status.json<StatusEvent>().find((event) => event.orderId === orderId);
    expect(created?.type).toBe('payment.created');
    return String(created?.paymentId);
  }

  beforeAll(async () => {
    const tls = await selfSignedTls();
    const dir = mkdtempSync(join(tmpdir(), 'pfb-tls-'));
    writeFileSync(join(dir, 'cert.pem'), tls.cert);
    writeFileSync(join(dir, 'key.pem'), tls.key);
    port = await freePort();
    pipeline = await startPipeline(
      'webhooks',
      {
        HTTP_PORT: String(port),
        WEBHOOK_PUBLIC_BASE_URL: `https://localhost:${port}`,
        TLS_CERT_FILE: join(dir, 'cert.pem'),
        TLS_KEY_FILE: join(dir, 'key.pem'),
      },
      { webhookCa: tls.ca },
    );
    [worker, status] = await Promise.all([
      pipeline.startWorker({ webhookProcessing: { pollIntervalMs: 100, retryBaseMs: 200 } }),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
    ]);
    db = new pg.Client({ connectionString: pipeline.database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db.end();
    await status.stop();
    await pipeline.stop();
  });

  it('turns a payer’s payment into one payment.status_changed from the webhook', async () => {
    const orderId = anOrderId('WH');
    const paymentId = await createPayment(orderId);
    await control('POST', `/payments/${paymentId}/simulate`, { action: 'paid' });
    await status.waitFor(() => eventsOf(orderId).length >= 1);
    expect(eventsOf(orderId)[0]?.data).toMatchObject({
      providerStatus: 'SUCCESS',
      status: 'paid',
      source: 'webhook',
    });
    const sent = await deliveries(paymentId);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((delivery) => delivery.delivered)).toBe(true);
    expect(
      sent.every((delivery) =>
        delivery.url.startsWith(`https://localhost:${port}/webhooks/payflow/`),
      ),
    ).toBe(true);
  });

  it('emits one event for a webhook delivered twice', async () => {
    const orderId = anOrderId('WH-DUP');
    const paymentId = await createPayment(orderId);
    await control('POST', `/payments/${paymentId}/simulate`, { action: 'opened' });
    await status.waitFor(() => eventsOf(orderId).length >= 1);
    for (const delivery of await deliveries(paymentId)) {
      await control('POST', `/webhook-deliveries/${delivery.id}/redeliver`);
    }
    const { rows } = await db.query<{ duplicates: number }>(
      `SELECT duplicates FROM webhook_inbox i JOIN payments p ON p.id = i.payment_id WHERE p.payflow_id = $1`,
      [paymentId],
    );
    expect(rows.some((row) => row.duplicates >= 1)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(eventsOf(orderId)).toHaveLength(1);
  });

  it('ends on the latest state when webhooks arrive out of order', async () => {
    const orderId = anOrderId('WH-ORDER');
    const paymentId = await createPayment(orderId);
    await control('POST', '/webhook-hold', { paymentId, enabled: true });
    await control('POST', `/payments/${paymentId}/simulate`, { action: 'opened' });
    await control('POST', `/payments/${paymentId}/simulate`, { action: 'paid' });
    const held = (await deliveries(paymentId)).filter((delivery) => !delivery.delivered);
    expect(held.length).toBeGreaterThanOrEqual(2);
    // The newest first, then the older ones.
    for (const delivery of [...held].reverse()) {
      await control('POST', `/webhook-deliveries/${delivery.id}/release`);
    }
    await status.waitFor(() => eventsOf(orderId).length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = eventsOf(orderId);
    expect(events.at(-1)?.data).toMatchObject({ providerStatus: 'SUCCESS', status: 'paid' });
    // Never a step back to OPENED after SUCCESS.
    expect(events.map((event) => event.data.providerStatus)).not.toContain('OPENED');
  });

  it('receives the retry when the receiver was down while Payflow retried, and emits once', async () => {
    const orderId = anOrderId('WH-DOWN');
    const paymentId = await createPayment(orderId);
    await worker?.shutdown();
    worker = undefined;
    await control('POST', `/payments/${paymentId}/simulate`, { action: 'paid' });
    const failed = await deliveries(paymentId);
    expect(failed.some((delivery) => !delivery.delivered)).toBe(true);
    worker = await pipeline.startWorker({
      webhookProcessing: { pollIntervalMs: 100, retryBaseMs: 200 },
    });
    await control('POST', '/clock/advance', { minutes: 5 });
    await status.waitFor(() => eventsOf(orderId).length >= 1);
    expect((await deliveries(paymentId)).every((delivery) => delivery.delivered)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(eventsOf(orderId)).toHaveLength(1);
    expect(eventsOf(orderId)[0]?.data).toMatchObject({
      providerStatus: 'SUCCESS',
      source: 'webhook',
    });
  });

  it('processes a webhook stored just before a crash after the restart', async () => {
    const orderId = anOrderId('WH-CRASH');
    const paymentId = await createPayment(orderId);
    await worker?.shutdown();
    worker = undefined;
    // The worker stored it and answered 2xx, then died before processing it: a stored,
    // unprocessed inbox row is exactly what that leaves behind.
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM payments WHERE payflow_id = $1`,
      [paymentId],
    );
    await control('POST', `/payments/${paymentId}/simulate`, { action: 'opened' });
    await db.query(
      `INSERT INTO webhook_inbox (payment_id, kind, dedupe_key, body, verdict)
       VALUES ($1, 'payment-update', $2, convert_to('{}', 'UTF8'), 'accepted')`,
      [rows[0]?.id, `test:${paymentId}`],
    );
    worker = await pipeline.startWorker({
      webhookProcessing: { pollIntervalMs: 100, retryBaseMs: 200 },
    });
    await status.waitFor(() => eventsOf(orderId).length >= 1);
    expect(eventsOf(orderId)[0]?.data).toMatchObject({
      providerStatus: 'OPENED',
      status: 'pending',
    });
  });

  it('finds a change by polling when the callback domain is not whitelisted', async () => {
    const orderId = anOrderId('WH-POLL');
    await control('PUT', '/webhook-whitelist', { domains: ['example.org'] });
    try {
      const paymentId = await createPayment(orderId);
      await control('POST', `/payments/${paymentId}/simulate`, { action: 'paid' });
      expect((await deliveries(paymentId)).every((delivery) => !delivery.delivered)).toBe(true);
      const { ReconciliationPoller } =
        await import('../../src/reconciliation/reconciliation.poller.js');
      const poller = worker?.app.get(ReconciliationPoller);
      const pass = await poller?.runPass();
      expect(pass).toBeDefined();
      await status.waitFor(() => eventsOf(orderId).length >= 1);
      expect(eventsOf(orderId)[0]?.data).toMatchObject({
        providerStatus: 'SUCCESS',
        source: 'poll',
      });
      await poller?.runPass();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(eventsOf(orderId)).toHaveLength(1);
    } finally {
      await control('PUT', '/webhook-whitelist', { domains: ['localhost', '127.0.0.1'] });
    }
  });
});
