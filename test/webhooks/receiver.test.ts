/**
 * The webhook receiver over real HTTPS against a real Postgres: authentication from each
 * of the three key locations, storage before the 2xx (raw body with the api key redacted,
 * redacted headers),
 * deduplication, refusals that store nothing and leak nothing, the per-token rate limit,
 * and the processor's wake-up after the commit.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TransactionBatcher } from '../../src/database/transaction-batcher.js';
import { MetricsService } from '../../src/management/metrics/metrics.service.js';
import { InboxSignal, type StoredWebhook } from '../../src/webhooks/inbox/inbox.signal.js';
import { WebhookInboxPruner } from '../../src/webhooks/inbox/webhook-inbox.pruner.js';
import { startReceiverKit, type ReceiverKit, type TestPayment } from './receiver-kit.js';

let kit: ReceiverKit;

beforeAll(async () => {
  kit = await startReceiverKit({ rateLimitPerSecond: 1, rateLimitBurst: 5 });
});

afterAll(async () => {
  await kit?.close();
});

const path = (payment: Pick<TestPayment, 'token'>, kind = 'payment-update'): string =>
  `/webhooks/payflow/${payment.token}/${kind}`;

function payload(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    deliveryId: crypto.randomUUID(),
    event: 'payment.updated',
    paymentId: 'pf-1',
    paymentStatus: 'paid',
    ...extra,
  });
}

/** No stack trace, exception name, framework code or path in a refusal's body. */
function expectCleanError(text: string, code: string): void {
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'message']);
  expect(body.code).toBe(code);
  expect(text).not.toMatch(
    /\bat \S+ \(|stack|Error|FST_|statusCode|node_modules|webhooks\/payflow/,
  );
}

async function countAll(): Promise<number> {
  const { rows } = await kit.pool.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_inbox`);
  return Number(rows[0]!.n);
}

describe('webhook receiver', () => {
  type Build = (key: string) => { headers: Record<string, string>; body: string };
  it.each<[string, Build]>([
    ['X-Api-Key header', (key: string) => ({ headers: { 'x-api-key': key }, body: payload() })],
    [
      'Authorization: Bearer',
      (key: string) => ({ headers: { authorization: `Bearer ${key}` }, body: payload() }),
    ],
    ['api_key body field', (key: string) => ({ headers: {}, body: payload({ api_key: key }) })],
  ])('accepts a webhook authenticated by the %s and stores it', async (_label, build) => {
    const payment = await kit.createPayment();
    const { headers, body } = build(payment.apiKey);
    const response = await kit.post(path(payment, 'status-update'), body, {
      ...headers,
      cookie: 'session=secret',
      'x-trace': 'abc',
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual({ status: 'accepted' });
    const rows = await kit.inboxRows(payment.id);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.kind).toBe('status-update');
    expect(row.verdict).toBe('accepted');
    expect(row.duplicates).toBe(0);
    // The body as received, but the api key never reaches storage: a key in the body is
    // replaced by "[redacted]" where it stood, every other byte kept.
    expect(row.body.toString('utf8')).toBe(body.split(payment.apiKey).join('[redacted]'));
    expect(row.body.toString('utf8')).not.toContain(payment.apiKey);
    if (body.includes('api_key')) {
      expect(JSON.parse(row.body.toString('utf8'))).toMatchObject({ api_key: '[redacted]' });
    }
    expect(row.headers['x-trace']).toBe('abc');
    expect(row.headers.cookie).toBe('[redacted]');
    expect(row.headers['content-type']).toBe('application/json');
    if (headers['x-api-key'] !== undefined) expect(row.headers['x-api-key']).toBe('[redacted]');
    if (headers.authorization !== undefined) expect(row.headers.authorization).toBe('[redacted]');
    expect(JSON.stringify(row.headers)).not.toContain(payment.apiKey);
  });

  it('stores the body bytes exactly as received (whitespace, key order, unicode)', async () => {
    const payment = await kit.createPayment();
    const body = Buffer.from('{ "b":1,\n  "a": "ø\\u00e6"  ,"z":[ ] }\n', 'utf8');
    const response = await kit.post(path(payment), body, { 'x-api-key': payment.apiKey });
    expect(response.status).toBe(200);
    const [row] = await kit.inboxRows(payment.id);
    expect(row!.body.equals(body)).toBe(true);
  });

  it('deduplicates by X-Payflow-Delivery: one row, duplicates = 1, both answered 2xx', async () => {
    const payment = await kit.createPayment();
    const headers = { 'x-api-key': payment.apiKey, 'x-payflow-delivery': 'dlv-1' };
    const first = await kit.post(path(payment), payload({ attempt: 1 }), headers);
    // A retry of the same delivery (its body may differ, e.g. a fresher status).
    const second = await kit.post(path(payment), payload({ attempt: 2 }), headers);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(JSON.parse(second.text)).toEqual({ status: 'duplicate' });
    const rows = await kit.inboxRows(payment.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.duplicates).toBe(1);
    expect(rows[0]!.dedupe_key).toMatch(/^delivery:[0-9a-f]{64}$/);
    // The same delivery id on another kind is another webhook.
    const other = await kit.post(path(payment, 'terminal-failure'), payload(), headers);
    expect(JSON.parse(other.text)).toEqual({ status: 'accepted' });
    expect(await kit.inboxRows(payment.id)).toHaveLength(2);
  });

  it('deduplicates a body that carries the api key, storing it redacted once', async () => {
    const payment = await kit.createPayment();
    const body = payload({ api_key: payment.apiKey });
    const first = await kit.post(path(payment), body, {});
    const second = await kit.post(path(payment), body, {});
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(JSON.parse(second.text)).toEqual({ status: 'duplicate' });
    const rows = await kit.inboxRows(payment.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.duplicates).toBe(1);
    expect(rows[0]!.body.toString('utf8')).not.toContain(payment.apiKey);
    const { rows: anywhere } = await kit.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM webhook_inbox
        WHERE position($1 in convert_from(body, 'UTF8')) > 0 OR headers::text LIKE '%' || $1 || '%'`,
      [payment.apiKey],
    );
    expect(Number(anywhere[0]!.n)).toBe(0);
  });

  it('deduplicates by body when there is no X-Payflow-Delivery', async () => {
    const payment = await kit.createPayment();
    const body = payload();
    const headers = { 'x-api-key': payment.apiKey };
    const answers = await Promise.all([
      kit.post(path(payment), body, headers),
      kit.post(path(payment), body, headers),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(
      answers.map((answer) => (JSON.parse(answer.text) as { status: string }).status).sort(),
    ).toEqual(['accepted', 'duplicate']);
    const rows = await kit.inboxRows(payment.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.duplicates).toBe(1);
    expect(rows[0]!.dedupe_key).toMatch(/^body:[0-9a-f]{64}$/);
  });

  it('refuses a wrong key, a missing key and an unknown token with 401, storing nothing', async () => {
    const payment = await kit.createPayment();
    const other = await kit.createPayment();
    const before = await countAll();
    const attempts = [
      kit.post(path(payment), payload(), { 'x-api-key': other.apiKey }),
      kit.post(path(payment), payload(), { authorization: `Bearer ${payment.apiKey}x` }),
      kit.post(path(payment), payload({ api_key: 'nope' })),
      kit.post(path(payment), payload()),
      kit.post(path(payment), payload(), { authorization: `Basic ${payment.apiKey}` }),
      kit.post(path({ token: 'A'.repeat(32) }), payload(), { 'x-api-key': payment.apiKey }),
      kit.post(path({ token: 'short' }), payload(), { 'x-api-key': payment.apiKey }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status).toBe(401);
      expectCleanError(response.text, 'unauthorized');
    }
    expect(await countAll()).toBe(before);
  });

  it('refuses oversize, non-JSON and non-object bodies and unknown kinds, storing nothing', async () => {
    const payment = await kit.createPayment();
    const key = { 'x-api-key': payment.apiKey };
    const before = await countAll();
    const big = JSON.stringify({ filler: 'x'.repeat(300 * 1024) });
    const cases: [Promise<{ status: number; text: string }>, number, string][] = [
      [kit.post(path(payment), big, key), 413, 'payload_too_large'],
      [kit.post(path(payment), '{"unterminated": ', key), 400, 'bad_request'],
      [kit.post(path(payment), 'not json at all', key), 400, 'bad_request'],
      [kit.post(path(payment), '[1,2,3]', key), 400, 'bad_request'],
      [kit.post(path(payment), '"a string"', key), 400, 'bad_request'],
      [kit.post(path(payment), 'null', key), 400, 'bad_request'],
      [kit.post(path(payment), '{"__proto__":{"x":1}}', key), 400, 'bad_request'],
      [kit.post(path(payment), '', key), 400, 'bad_request'],
      [
        kit.post(path(payment), payload(), { ...key, 'content-type': 'text/plain' }),
        400,
        'bad_request',
      ],
      [
        kit.post(path(payment), '<a/>', { ...key, 'content-type': 'application/xml' }),
        400,
        'bad_request',
      ],
      [kit.post(path(payment, 'refund-update'), payload(), key), 404, 'not_found'],
      [kit.post(`${path(payment)}/extra`, payload(), key), 404, 'not_found'],
    ];
    for (const [answer, status, code] of cases) {
      const response = await answer;
      expect({ status: response.status, code }).toEqual({ status, code });
      expectCleanError(response.text, code);
    }
    expect(await countAll()).toBe(before);
  });

  it('rate-limits one token with 429 and Retry-After while another token is served', async () => {
    const flooded = await kit.createPayment();
    const quiet = await kit.createPayment();
    const key = { 'x-api-key': flooded.apiKey };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => kit.post(path(flooded), payload(), key)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(6);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(6);
    for (const answer of limited) {
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expectCleanError(answer.text, 'rate_limited');
    }
    const served = await kit.post(path(quiet), payload(), { 'x-api-key': quiet.apiKey });
    expect(served.status).toBe(200);
    expect(await kit.inboxRows(flooded.id)).toHaveLength(
      statuses.filter((status) => status === 200).length,
    );
  });

  it('signals the processor after the commit, once per stored row and not for duplicates', async () => {
    const signal = kit.app.get(InboxSignal);
    const batcher = kit.app.get(TransactionBatcher);
    const events: string[] = [];
    const visible: Promise<number>[] = [];
    const stored: StoredWebhook[] = [];
    const offCommit = batcher.onCommit(() => events.push('commit'));
    const offStored = signal.onStored((batch) => {
      events.push('signal');
      stored.push(...batch);
      // Another connection sees the rows the signal names: they are committed.
      visible.push(
        kit.pool
          .query(`SELECT id FROM webhook_inbox WHERE id = ANY($1::bigint[])`, [
            batch.map((entry) => entry.inboxId),
          ])
          .then((result) => result.rowCount ?? 0),
      );
    });
    try {
      const payment = await kit.createPayment();
      const headers = { 'x-api-key': payment.apiKey, 'x-payflow-delivery': 'sig-1' };
      await kit.post(path(payment), payload(), headers);
      await kit.post(path(payment), payload(), headers);
      await new Promise((resolve) => setImmediate(resolve));
      expect(stored).toEqual([
        { inboxId: expect.any(String), paymentId: payment.id, kind: 'payment-update' },
      ]);
      expect(events.indexOf('commit')).toBeLessThan(events.indexOf('signal'));
      expect(await Promise.all(visible)).toEqual([1]);
    } finally {
      offCommit();
      offStored();
    }
  });

  it('counts answers by kind and outcome and observes the ack latency', async () => {
    const text = await kit.app.get(MetricsService).registry.metrics();
    expect(text).toMatch(
      /payflow_bridge_webhooks_received_total\{kind="status-update",outcome="accepted"\} [1-9]/,
    );
    expect(text).toMatch(
      /payflow_bridge_webhooks_received_total\{kind="payment-update",outcome="duplicate"\} [1-9]/,
    );
    expect(text).toMatch(/outcome="unauthorized"\} [1-9]/);
    expect(text).toMatch(/kind="unknown",outcome="rejected"\} [1-9]/);
    expect(text).toMatch(/outcome="rate_limited"\} [1-9]/);
    expect(text).toMatch(/payflow_bridge_webhook_ack_seconds_count\{outcome="accepted"\} [1-9]/);
  });

  it('prunes processed rows past the retention and keeps the others', async () => {
    const payment = await kit.createPayment();
    for (const id of ['p-old', 'p-new', 'u-old']) {
      await kit.post(path(payment), payload(), {
        'x-api-key': payment.apiKey,
        'x-payflow-delivery': id,
      });
    }
    const rows = await kit.inboxRows(payment.id);
    expect(rows).toHaveLength(3);
    const [oldProcessed, newProcessed, oldUnprocessed] = rows.map((row) => row.id);
    await kit.pool.query(
      `UPDATE webhook_inbox SET received_at = now() - interval '9 days', processed_at = now()
       WHERE id = $1`,
      [oldProcessed],
    );
    await kit.pool.query(`UPDATE webhook_inbox SET processed_at = now() WHERE id = $1`, [
      newProcessed,
    ]);
    await kit.pool.query(
      `UPDATE webhook_inbox SET received_at = now() - interval '9 days' WHERE id = $1`,
      [oldUnprocessed],
    );
    expect(await kit.app.get(WebhookInboxPruner).prune()).toBe(1);
    expect((await kit.inboxRows(payment.id)).map((row) => row.id)).toEqual([
      newProcessed,
      oldUnprocessed,
    ]);
  });
});
