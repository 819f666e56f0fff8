/**
 * `payflow-bridge in-doubt list` and `in-doubt resolve` through the compiled binary, beside
 * a real worker (real Postgres, the run's Kafka, the sandbox over HTTP). Calls are put in
 * doubt the way production does it: the sandbox resets the connection of a creation after
 * (or before) it processed it, the worker parks the event and the order's next one.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import {
  anEnvelope,
  anOrderId,
  markedPaidData,
  paymentRequestedData,
} from '../support/builders.js';
import { openTestPool } from '../support/database.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import { sandboxControl, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET } from '../support/sandbox.js';
import { sandboxPayments } from '../orders/support/pipeline.js';
import { basic, createPayment, tokenRequest, type PaymentOptions } from '../sandbox/helpers.js';
import { buildCli, runBinary, type BinaryResult } from './cli-test-kit.js';

interface StatusEvent {
  readonly type: string;
  readonly orderId: string;
  readonly paymentId: string | null;
  readonly data: Record<string, unknown>;
}

interface ListItem {
  orderId: string;
  eventId: string;
  eventType: string;
  organizationId: string | null;
  sent: {
    total: { amount: string; currency: string } | null;
    lines: number | null;
    installments: number | null;
  };
  sentAt: string | null;
  request: { left: boolean; leftSecondsAgo: number | null };
  webhooks: {
    received: number;
    unprocessed: number;
    firstReceivedAt: string | null;
    lastReceivedAt: string | null;
    kinds: string[];
  };
  probe: { outcome: string } | null;
  errorCode: string | null;
  payment: { id: string | null; state: string | null; payflowId: string | null };
  parkedEvents: number;
  blocked: boolean;
}

let pipeline: Pipeline;
let status: TopicReader;
let db: pg.Pool;

beforeAll(async () => {
  [pipeline] = await Promise.all([
    startPipeline('cli_in_doubt', { PAYFLOW_REQUEST_TIMEOUT: '2s' }),
    buildCli(),
  ]);
  db = openTestPool(pipeline.database.url, 2);
  [, status] = await Promise.all([
    pipeline.startWorker({ transport: { retry: { baseDelayMs: 50, maxDelayMs: 200 } } }),
    TopicReader.start(pipeline.kafka, pipeline.topics.status),
  ]);
}, 240_000);

afterAll(async () => {
  await status?.stop();
  await db?.end();
  await pipeline?.stop();
});

function cli(args: readonly string[]): Promise<BinaryResult> {
  return runBinary(args, {
    DATABASE_URL: pipeline.database.url,
    KAFKA_BROKERS: pipeline.cluster.bootstrapServers,
    TOPIC_ORDERS: pipeline.topics.orders,
    TOPIC_PAYMENT_STATUS: pipeline.topics.status,
    TOPIC_SETTLEMENTS: pipeline.topics.settlements,
    PAYFLOW_BASE_URL: pipeline.sandbox.url,
    PAYFLOW_PARTNER_BASE_URL: pipeline.sandbox.partnerUrl,
    PAYFLOW_CLIENT_ID: SANDBOX_CLIENT_ID,
    PAYFLOW_CLIENT_SECRET: SANDBOX_CLIENT_SECRET,
  });
}

const eventsOf = (orderId: string): StatusEvent[] =>
  status.json<StatusEvent>().filter((event) => event.orderId === orderId);

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function lettersOf(orderId: string): Promise<{ reason: string; replayed: boolean }[]> {
  const { rows } = await db.query<{ reason: string; replayed: boolean }>(
    `SELECT reason, replayed_at IS NOT NULL AS replayed FROM dead_letters
      WHERE order_id = $1 ORDER BY id`,
    [orderId],
  );
  return rows;
}

async function stateOf(orderId: string) {
  const { rows } = await db.query<{
    attempt: string;
    payment: string;
    payflow_id: string | null;
    verdicts: number;
  }>(
    `SELECT a.state AS attempt, p.state AS payment, p.payflow_id,
            (SELECT count(*)::int FROM in_doubt_verdicts v WHERE v.order_id = a.order_id) AS verdicts
       FROM command_attempts a JOIN payments p ON p.id = a.payment_id
      WHERE a.order_id = $1 AND a.command = 'order.payment_requested'`,
    [orderId],
  );
  return rows[0];
}

/** A creation in doubt (the sandbox resets its connection) and a later event parked behind it. */
async function creationInDoubt(orderId: string, afterProcessing: boolean): Promise<void> {
  await sandboxControl(pipeline.sandbox, 'POST', '/faults', {
    method: 'POST',
    path: '/api/payments',
    reset: true,
    afterProcessing,
    times: 1,
  });
  await pipeline.publish([
    {
      key: orderId,
      value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
    },
    { key: orderId, value: anEnvelope('order.marked_paid', markedPaidData(), { orderId }) },
  ]);
  await until('both events of the order to be dead-lettered', async () => {
    const letters = await lettersOf(orderId);
    return letters.length === 2;
  });
  expect((await lettersOf(orderId)).map((letter) => letter.reason)).toEqual([
    'in_doubt',
    'blocked_by_earlier_failure',
  ]);
}

/** A payment made at Payflow by someone else (unknown to the bridge): its Payflow id. */
async function paymentAtPayflow(options: PaymentOptions, organizationId?: string): Promise<string> {
  const answer = await tokenRequest<{ access_token: string }>(
    pipeline.sandbox,
    basic(SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET),
    { grant_type: 'client_credentials' },
  );
  const created = await createPayment(
    pipeline.sandbox,
    answer.body.access_token,
    options,
    organizationId,
  );
  return created.id;
}

describe('in-doubt list and resolve --payment', () => {
  it('lists the creation, refuses a payment that differs, adopts the right one once', async () => {
    const orderId = anOrderId('DOUBT');
    await creationInDoubt(orderId, true);
    const [atPayflow] = await sandboxPayments(pipeline.sandbox, orderId);
    if (atPayflow === undefined) throw new Error('the sandbox did not create the payment');

    const list = await cli(['in-doubt', 'list']);
    expect(list.err).toBe('');
    expect(list.code).toBe(0);
    const line = list.out.split('\n').find((row) => row.startsWith(orderId)) ?? '';
    expect(line).toContain('order.payment_requested');
    expect(line).toContain('create: org-1, 1250.00 NOK, 1 line(s), 0 installment(s)');
    expect(line).toContain('payment in_doubt, Payflow id unknown');
    expect(line).toMatch(/ \(\d+s ago\)/);
    expect(line).toMatch(/Payflow id unknown\s+none\s+-\s+1 \(blocked\)$/);

    const json = await cli(['in-doubt', 'list', '--json']);
    expect(json.code).toBe(0);
    const items = (JSON.parse(json.out) as { inDoubt: ListItem[] }).inDoubt;
    expect(items.find((item) => item.orderId === orderId)).toMatchObject({
      eventType: 'order.payment_requested',
      organizationId: 'org-1',
      sent: { total: { amount: '1250.00', currency: 'NOK' }, lines: 1, installments: null },
      sentAt: expect.any(String),
      request: { left: true, leftSecondsAgo: expect.any(Number) },
      webhooks: { received: 0, unprocessed: 0, kinds: [], lastReceivedAt: null },
      probe: null,
      errorCode: expect.any(String),
      payment: { state: 'in_doubt', payflowId: null },
      parkedEvents: 1,
      blocked: true,
    });

    // A webhook naming the payment (stored processed, so that the worker's inbox processor
    // leaves it as it is): the list says it arrived, and when.
    const { rows } = await db.query<{ id: string }>(
      'SELECT id::text AS id FROM payments WHERE order_id = $1',
      [orderId],
    );
    await db.query(
      `INSERT INTO webhook_inbox (payment_id, kind, dedupe_key, body, verdict, attempts,
                                 last_error, processed_at)
       VALUES ($1, 'status-update', $2, '{"api_key":"secret-key"}', 'accepted', 2,
               'Payflow 503', now())`,
      [rows[0]?.id, `dedupe-${orderId}`],
    );
    const withWebhook = await cli(['in-doubt', 'list']);
    expect(withWebhook.out.split('\n').find((row) => row.startsWith(orderId))).toMatch(
      /Payflow id unknown\s+1 \(status-update; last 20\d\d-\S+\)\s+-\s+1 \(blocked\)$/,
    );
    expect(withWebhook.out).not.toContain('secret-key');
    const withWebhookJson = JSON.parse((await cli(['in-doubt', 'list', '--json'])).out) as {
      inDoubt: ListItem[];
    };
    expect(withWebhookJson.inDoubt.find((item) => item.orderId === orderId)?.webhooks).toEqual({
      received: 1,
      unprocessed: 0,
      firstReceivedAt: expect.any(String),
      lastReceivedAt: expect.any(String),
      kinds: ['status-update'],
    });

    // Payments that are not this order's: another total, currency, organization.
    const same = { total: 1250, net: 1000, internalRef: 'SO-DECOY' };
    const otherTotal = await paymentAtPayflow({ ...same, total: 2500, net: 2000 });
    const otherCurrency = await paymentAtPayflow({ ...same, currency: 'EUR' });
    await sandboxControl(pipeline.sandbox, 'POST', '/organizations', { id: 'org-2' });
    await sandboxControl(pipeline.sandbox, 'POST', '/clients', {
      clientId: SANDBOX_CLIENT_ID,
      clientSecret: SANDBOX_CLIENT_SECRET,
      scopes: [
        'organization:payflow:create',
        'organization:payflow:update',
        'organization:payflow:read',
      ],
      organizationIds: ['org-1', 'org-2'],
    });
    const otherOrganization = await paymentAtPayflow(same, 'org-2');
    const refusals: [string, RegExp][] = [
      [otherTotal, /its total is 2500\.00 NOK, the bridge sent 1250\.00 NOK/],
      [otherCurrency, /its currency is EUR, the bridge sent NOK/],
      [otherOrganization, /Payflow has no payment \S+ in organization org-1/],
    ];
    for (const [payflowId, reason] of refusals) {
      const refused = await cli(['in-doubt', 'resolve', orderId, '--payment', payflowId]);
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(reason);
      expect(refused.err).toMatch(/nothing changed\n$/);
      expect(refused.err.trim().split('\n')).toHaveLength(1);
      expect(await stateOf(orderId)).toEqual({
        attempt: 'in_doubt',
        payment: 'in_doubt',
        payflow_id: null,
        verdicts: 0,
      });
      expect((await lettersOf(orderId)).every((letter) => !letter.replayed)).toBe(true);
    }

    const adopted = await cli([
      'in-doubt',
      'resolve',
      orderId,
      '--payment',
      atPayflow.id,
      '--by',
      'kari.oncall',
    ]);
    expect(adopted.err).toBe('');
    expect(adopted.code).toBe(0);
    expect(adopted.out).toContain(`Order ${orderId}: adopted Payflow payment ${atPayflow.id}`);
    expect(adopted.out).toContain(
      'republished 2 dead letter(s) (blocked_by_earlier_failure 1, in_doubt 1)',
    );
    expect(adopted.out).toContain('by kari.oncall');

    // payment.created for the adopted payment, then the parked event takes effect.
    await status.waitFor(() =>
      eventsOf(orderId).some((event) => event.type === 'payment.marked_paid'),
    );
    const types = eventsOf(orderId).map((event) => event.type);
    expect(types.filter((type) => type === 'payment.created')).toHaveLength(1);
    expect(types.indexOf('payment.created')).toBeLessThan(types.indexOf('payment.marked_paid'));
    expect(eventsOf(orderId).find((event) => event.type === 'payment.created')?.paymentId).toBe(
      atPayflow.id,
    );
    expect(await stateOf(orderId)).toEqual({
      attempt: 'resolved',
      payment: 'created',
      payflow_id: atPayflow.id,
      verdicts: 1,
    });
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(1);

    // Again: already resolved, nothing republished; the other verdict is refused.
    const again = await cli(['in-doubt', 'resolve', orderId, '--payment', atPayflow.id]);
    expect(again.code).toBe(0);
    expect(again.out).toContain(`Order ${orderId}: already resolved, payment found at Payflow`);
    const otherwise = await cli(['in-doubt', 'resolve', orderId, '--not-created']);
    expect(otherwise.code).toBe(1);
    expect(otherwise.err).toMatch(/already resolved otherwise/);
    expect((await stateOf(orderId))?.verdicts).toBe(1);
    const listed = await cli(['in-doubt', 'list', '--json']);
    expect(JSON.parse(listed.out)).not.toEqual(
      expect.objectContaining({
        inDoubt: expect.arrayContaining([expect.objectContaining({ orderId })]),
      }),
    );

    // order show: the verdict, and the payment's webhook inbox row stored above.
    const shown = await cli(['order', 'show', orderId]);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('In-doubt verdicts (1)');
    expect(shown.out).toMatch(/kari\.oncall\s+order\.payment_requested\s+payment_found/);
    expect(shown.out).toMatch(
      /Webhooks\n.*received.*kind.*\n.*\n.*status-update\s+0\s+2\s+20\d\d-\S+\s+Payflow 503/,
    );
    expect(shown.out).not.toContain('secret-key');
    const shownJson = JSON.parse((await cli(['order', 'show', orderId, '--json'])).out) as {
      inDoubtVerdicts: { verdict: string; payflowId: string; replayedLetters: number }[];
      payments: { webhooks: { kind: string; processed: boolean }[] }[];
    };
    expect(shownJson.inDoubtVerdicts).toEqual([
      expect.objectContaining({
        verdict: 'payment_found',
        payflowId: atPayflow.id,
        replayedLetters: 2,
      }),
    ]);
    expect(shownJson.payments[0]?.webhooks).toEqual([
      expect.objectContaining({ kind: 'status-update', processed: true, attempts: 2 }),
    ]);
  }, 180_000);
});

describe('in-doubt resolve --not-created', () => {
  it('lets the replay create exactly one payment, and is idempotent', async () => {
    const orderId = anOrderId('NEVER');
    await creationInDoubt(orderId, false);
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(0);

    // Without a send mark (as an attempt recorded before sent_at existed has none), the
    // list says the request never left.
    await db.query(
      `UPDATE command_attempts SET sent_at = NULL
        WHERE order_id = $1 AND command = 'order.payment_requested'`,
      [orderId],
    );
    const list = await cli(['in-doubt', 'list']);
    expect(list.out.split('\n').find((row) => row.startsWith(orderId))).toContain(
      'never left (no send mark)',
    );
    const items = (
      JSON.parse((await cli(['in-doubt', 'list', '--json'])).out) as {
        inDoubt: ListItem[];
      }
    ).inDoubt;
    expect(items.find((item) => item.orderId === orderId)).toMatchObject({
      sentAt: null,
      request: { left: false, leftSecondsAgo: null },
      webhooks: { received: 0 },
    });

    const resolved = await cli(['in-doubt', 'resolve', orderId, '--not-created', '--by', 'ola']);
    expect(resolved.err).toBe('');
    expect(resolved.code).toBe(0);
    expect(resolved.out).toContain('marked as never taken by Payflow');
    expect(resolved.out).toContain('republished 2 dead letter(s)');

    await status.waitFor(() =>
      eventsOf(orderId).some((event) => event.type === 'payment.marked_paid'),
    );
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(1);
    expect(eventsOf(orderId).filter((event) => event.type === 'payment.created')).toHaveLength(1);
    expect(await stateOf(orderId)).toMatchObject({ attempt: 'succeeded', payment: 'created' });

    const again = await cli(['in-doubt', 'resolve', orderId, '--not-created']);
    expect(again.code).toBe(0);
    expect(again.out).toContain('already resolved, not created at Payflow by ola');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(1);
  }, 120_000);

  it('is refused while the request may still land (the late-effect window), then accepted', async () => {
    const orderId = anOrderId('WINDOW');
    await creationInDoubt(orderId, false);
    const refused = await cli(['in-doubt', 'resolve', orderId, '--not-created', '--by', 'ola']);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      /its request left Payflow less than PAYFLOW_LATE_EFFECT_WINDOW ago, so Payflow may still apply it until \d{4}-\d\d-\d\dT\S+Z; give --not-created after that; nothing changed/,
    );
    expect(await stateOf(orderId)).toMatchObject({ attempt: 'in_doubt', verdicts: 0 });

    // Once the window has passed since the request left, the verdict is taken.
    await db.query(
      `UPDATE command_attempts SET sent_at = sent_at - interval '1 hour',
              last_sent_at = last_sent_at - interval '1 hour'
        WHERE order_id = $1 AND command = 'order.payment_requested'`,
      [orderId],
    );
    const resolved = await cli(['in-doubt', 'resolve', orderId, '--not-created', '--by', 'ola']);
    expect(resolved.code).toBe(0);
    expect(resolved.out).toContain('marked as never taken by Payflow');
    await status.waitFor(() =>
      eventsOf(orderId).some((event) => event.type === 'payment.marked_paid'),
    );
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(1);
  }, 120_000);

  it('refuses an order with no call in doubt, and bad usage', async () => {
    const none = await cli(['in-doubt', 'resolve', 'SO-NOTHING', '--not-created']);
    expect(none.code).toBe(1);
    expect(none.err).toBe(
      'payflow-bridge: order SO-NOTHING has no Payflow call in doubt (see in-doubt list)\n',
    );
    expect((await cli(['in-doubt', 'resolve', 'SO-NOTHING'])).code).toBe(2);
    expect(
      (await cli(['in-doubt', 'resolve', 'SO-NOTHING', '--not-created', '--payment', 'abc'])).code,
    ).toBe(2);
    expect((await cli(['in-doubt', 'resolve', 'SO-NOTHING', '--payment', 'a b'])).code).toBe(2);
  }, 60_000);
});
