/**
 * Webhooks by the spec's rules, against a real HTTPS receiver with a self-signed
 * certificate that the sandbox trusts through `webhookCa`: https only, whitelist, 2xx =
 * delivered, 25 retries on the back-off table on the virtual clock; plus X-Api-Key,
 * which URL gets what, redelivery and hold/release.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { fetchToken, startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import { selfSignedTls, startHttpsReceiver, type HttpsReceiver } from '../support/tls.js';
import { call, control, createPayment } from './helpers.js';

/** Minutes after the first attempt at which each of the 25 retries is due. */
const RETRY_OFFSETS = (() => {
  const waits = [5, 15, 30, 60, 1440].flatMap((wait) => [wait, wait, wait, wait, wait]);
  let sum = 0;
  return waits.map((wait) => (sum += wait));
})();

interface Delivery {
  id: string;
  deliveryId: string;
  paymentId: string;
  url: string;
  kind: string;
  payload: Record<string, unknown>;
  attempts: { at: string; status: number; error?: string }[];
  delivered: boolean;
  givenUp: boolean;
  skipped?: string;
  held: boolean;
  nextAttemptAt: string | null;
}

describe('sandbox webhooks', () => {
  let sandbox: SandboxHandle;
  let receiver: HttpsReceiver;
  let token: string;

  beforeAll(async () => {
    const tls = await selfSignedTls();
    receiver = await startHttpsReceiver(tls);
    sandbox = await startTestSandbox({ webhookCa: tls.ca });
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });
  beforeEach(async () => {
    await control(sandbox, 'POST', '/reset');
    receiver.received.length = 0;
    receiver.respondWith(() => 200);
    token = await fetchToken(sandbox);
  });

  const deliveries = async (paymentId?: string) =>
    (
      await control<{ deliveries: Delivery[] }>(
        sandbox,
        'GET',
        `/webhook-deliveries${paymentId ? `?paymentId=${paymentId}` : ''}`,
      )
    ).body.deliveries;
  const simulate = (paymentId: string, action: string) =>
    control(sandbox, 'POST', `/payments/${paymentId}/simulate`, { action });
  const advance = (minutes: number) => control(sandbox, 'POST', '/clock/advance', { minutes });
  const minutesBetween = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 60_000;

  it('retries a failing receiver 25 times on the back-off table (7750 minutes), then gives up', async () => {
    receiver.respondWith(() => 500);
    const payment = await createPayment(sandbox, token, {
      callback: { url: `${receiver.url}/hooks/payment-update`, api_key: 'secret-key' },
    });
    await simulate(payment.id, 'opened');
    let [delivery] = await deliveries();
    expect(delivery?.attempts).toEqual([{ at: expect.any(String), status: 500 }]);
    expect(delivery?.delivered).toBe(false);

    await advance(4);
    expect(receiver.received).toHaveLength(1);
    await advance(1);
    expect(receiver.received).toHaveLength(2);

    await advance(7750);
    [delivery] = await deliveries();
    const attempts = delivery?.attempts ?? [];
    expect(attempts).toHaveLength(26);
    const first = attempts[0]?.at ?? '';
    expect(attempts.slice(1).map((attempt) => minutesBetween(first, attempt.at))).toEqual(
      RETRY_OFFSETS,
    );
    expect(minutesBetween(first, attempts[25]?.at ?? '')).toBe(7750);
    expect(attempts.every((attempt) => attempt.status === 500)).toBe(true);
    expect(delivery?.givenUp).toBe(true);
    expect(delivery?.nextAttemptAt).toBeNull();
    expect(receiver.received).toHaveLength(26);

    // every attempt carries the api key and the same delivery id
    const ids = new Set(receiver.received.map((request) => request.headers['x-payflow-delivery']));
    expect(ids.size).toBe(1);
    expect(
      receiver.received.every((request) => request.headers['x-api-key'] === 'secret-key'),
    ).toBe(true);
    expect(receiver.received[0]?.path).toBe('/hooks/payment-update');
    expect(receiver.received[0]?.body).toMatchObject({
      deliveryId: delivery?.deliveryId,
      event: 'payment.updated',
      paymentId: payment.id,
      organizationId: 'org-1',
      paymentStatus: 'OPENED',
      change: 'opened',
    });

    await advance(60 * 24 * 30);
    expect(receiver.received).toHaveLength(26);
  });

  it('stops retrying at the first 2xx (3 failures, then success: 4 attempts)', async () => {
    receiver.respondWith((_request, index) => (index < 3 ? 503 : 204));
    const payment = await createPayment(sandbox, token, {
      callback: { url: `${receiver.url}/hook` },
    });
    await simulate(payment.id, 'paid');
    await advance(60);
    const [delivery] = await deliveries();
    expect(delivery?.attempts.map((attempt) => attempt.status)).toEqual([503, 503, 503, 204]);
    const first = delivery?.attempts[0]?.at ?? '';
    expect(delivery?.attempts.map((attempt) => minutesBetween(first, attempt.at))).toEqual([
      0, 5, 10, 15,
    ]);
    expect(delivery?.delivered).toBe(true);
    expect(delivery?.givenUp).toBe(false);
    expect(receiver.received).toHaveLength(4);
  });

  it('sends nothing to an http:// URL or a non-whitelisted domain, and creation still succeeds', async () => {
    const plain = receiver.url.replace('https://', 'http://');
    const httpPayment = await createPayment(sandbox, token, { callback: { url: `${plain}/hook` } });
    await control(sandbox, 'PUT', '/webhook-whitelist', { domains: ['example.com'] });
    const otherPayment = await createPayment(sandbox, token, {
      callback: { url: `${receiver.url}/hook` },
    });
    await simulate(httpPayment.id, 'opened');
    await simulate(otherPayment.id, 'opened');
    await advance(8000);
    const [httpDelivery] = await deliveries(httpPayment.id);
    const [otherDelivery] = await deliveries(otherPayment.id);
    expect(httpDelivery).toMatchObject({ skipped: 'not_https', attempts: [], delivered: false });
    expect(otherDelivery).toMatchObject({
      skipped: 'not_whitelisted',
      attempts: [],
      delivered: false,
    });
    expect(receiver.received).toHaveLength(0);
  });

  it('matches whitelisted domains by host name (localhost)', async () => {
    const payment = await createPayment(sandbox, token, {
      callback: { url: `${receiver.localhostUrl}/hook` },
    });
    await simulate(payment.id, 'opened');
    const [delivery] = await deliveries();
    expect(delivery?.delivered).toBe(true);
  });

  it('matches whitelisted IP addresses exactly: 0.0.1 does not let 127.0.0.1 through', async () => {
    await control(sandbox, 'PUT', '/webhook-whitelist', { domains: ['0.0.1'] });
    const payment = await createPayment(sandbox, token, {
      callback: { url: `${receiver.url}/hook` }, // https://127.0.0.1:<port>
    });
    await simulate(payment.id, 'opened');
    const [delivery] = await deliveries(payment.id);
    expect(delivery).toMatchObject({ skipped: 'not_whitelisted', attempts: [] });
    expect(receiver.received).toHaveLength(0);
  });

  it('reads the whitelist again before every retry', async () => {
    receiver.respondWith(() => 500);
    const payment = await createPayment(sandbox, token, {
      callback: { url: `${receiver.url}/hook` },
    });
    await simulate(payment.id, 'opened');
    expect(receiver.received).toHaveLength(1);
    // the operator removes 127.0.0.1: the retry due in 5 minutes is not sent
    await control(sandbox, 'PUT', '/webhook-whitelist', { domains: ['localhost'] });
    await advance(60);
    expect(receiver.received).toHaveLength(1);
    const [delivery] = await deliveries(payment.id);
    expect(delivery).toMatchObject({
      skipped: 'not_whitelisted',
      delivered: false,
      nextAttemptAt: null,
    });
    expect(delivery?.attempts).toHaveLength(1);
    await control(sandbox, 'PUT', '/webhook-whitelist', { domains: ['127.0.0.1'] });
    await advance(8000);
    expect(receiver.received).toHaveLength(1);
  });

  it('sends status changes to status_update_url and terminal failures to terminal_failure_url', async () => {
    const payment = await createPayment(sandbox, token, {
      total: 100,
      installments: [
        { date: '2030-01-01', grossAmount: 50 },
        { date: '2030-02-01', grossAmount: 50 },
      ],
      callback: {
        url: `${receiver.url}/update`,
        status_update_url: `${receiver.url}/status`,
        terminal_failure_url: `${receiver.url}/terminal`,
        api_key: { tenant: 7 },
      },
    });
    await simulate(payment.id, 'opened'); // status change: update + status
    await simulate(payment.id, 'installment_failed'); // no status change: update only
    await simulate(payment.id, 'terminal_failure'); // terminal only
    const paths = receiver.received.map((request) => request.path);
    // the first two were sent concurrently
    expect([...paths.slice(0, 2)].sort()).toEqual(['/status', '/update']);
    expect(paths.slice(2)).toEqual(['/update', '/terminal']);
    const bodyAt = (path: string) =>
      receiver.received.find((request) => request.path === path)?.body;
    expect(bodyAt('/status')).toMatchObject({
      event: 'payment.status_updated',
      paymentStatus: 'OPENED',
    });
    expect(bodyAt('/terminal')).toMatchObject({ event: 'payment.terminal_failure' });
    expect(receiver.received[0]?.headers['x-api-key']).toBe('{"tenant":7}');
  });

  it('clock/advance first awaits webhooks fired by API calls', async () => {
    const payment = await createPayment(sandbox, token, {
      callback: { url: `${receiver.url}/hook` },
    });
    await call('DELETE', `${sandbox.url}/api/payments/${payment.id}`, { token });
    await advance(0);
    const [delivery] = await deliveries();
    expect(delivery?.payload).toMatchObject({ change: 'cancelled', paymentStatus: 'REJECTED' });
    expect(delivery?.delivered).toBe(true);
  });

  it('redelivers a webhook (the same deliveryId arrives twice)', async () => {
    const payment = await createPayment(sandbox, token, {
      callback: { url: `${receiver.url}/hook` },
    });
    await simulate(payment.id, 'opened');
    const [delivery] = await deliveries();
    const again = await control<Delivery>(
      sandbox,
      'POST',
      `/webhook-deliveries/${delivery?.id ?? ''}/redeliver`,
    );
    expect(again.status).toBe(200);
    expect(again.body.delivered).toBe(true);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[0]?.body).toEqual(receiver.received[1]?.body);
    expect(receiver.received[1]?.headers['x-payflow-delivery']).toBe(delivery?.deliveryId);
  });

  it('holds webhooks back and releases them out of order', async () => {
    const payment = await createPayment(sandbox, token, {
      callback: { url: `${receiver.url}/hook` },
    });
    await control(sandbox, 'POST', '/webhook-hold', { paymentId: payment.id, enabled: true });
    await simulate(payment.id, 'opened');
    await simulate(payment.id, 'paid');
    const held = await deliveries();
    expect(held.map((delivery) => delivery.held)).toEqual([true, true]);
    expect(receiver.received).toHaveLength(0);
    for (const delivery of [...held].reverse()) {
      const released = await control<Delivery>(
        sandbox,
        'POST',
        `/webhook-deliveries/${delivery.id}/release`,
      );
      expect(released.body.delivered).toBe(true);
    }
    expect(receiver.received.map((request) => (request.body as { change: string }).change)).toEqual(
      ['paid', 'opened'],
    );
    await control(sandbox, 'POST', '/webhook-hold', { paymentId: payment.id, enabled: false });
    const notHeld = await control(
      sandbox,
      'POST',
      `/webhook-deliveries/${held[0]?.id ?? ''}/release`,
    );
    expect(notHeld.status).toBe(409);
  });

  it('records a connection error as status 0 and an untrusted certificate as a failure', async () => {
    const untrusting = await startTestSandbox(); // no webhookCa
    try {
      const untrustingToken = await fetchToken(untrusting);
      const payment = await createPayment(untrusting, untrustingToken, {
        callback: { url: `${receiver.url}/hook` },
      });
      await control(untrusting, 'POST', `/payments/${payment.id}/simulate`, { action: 'opened' });
      const listed = await control<{ deliveries: Delivery[] }>(
        untrusting,
        'GET',
        '/webhook-deliveries',
      );
      const attempt = listed.body.deliveries[0]?.attempts[0];
      expect(attempt?.status).toBe(0);
      expect(attempt?.error).toMatch(/cert|self.signed|verify/i);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await untrusting.close();
    }

    const payment = await createPayment(sandbox, token, {
      callback: { url: 'https://127.0.0.1:1/hook' },
    });
    await simulate(payment.id, 'opened');
    const [delivery] = await deliveries();
    expect(delivery?.attempts[0]).toEqual({
      at: expect.any(String),
      status: 0,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    expect(delivery?.nextAttemptAt).not.toBeNull();
  });
});
