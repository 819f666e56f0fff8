/**
 * The console's discard (`POST /console/dead-letters/{eventId}/discard`, form: `reason`)
 * over plain HTTP, without a browser, against the real worker (Postgres of its own, the
 * run's Kafka, the Payflow sandbox): signed in with the token as a person is, with the CSRF
 * token the pages carry. Payflow refuses a creation once (422), and the corrected creation
 * the ERP sent next waits behind it; a person discards the refused one.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Worker } from '../../src/worker.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import { sandboxControl } from '../support/sandbox.js';
import { sandboxPayments } from '../orders/support/pipeline.js';
import { signIn, type Session } from '../console/console-session.js';

const TOKEN = 'console-token-for-the-discard-test-0123456789';
const OPERATOR = 'Per Discard';

interface StatusEvent {
  readonly type: string;
  readonly orderId: string;
  readonly data: Record<string, unknown>;
}

describe('the console’s discard, over HTTP', () => {
  let pipeline: Pipeline;
  let worker: Worker;
  let status: TopicReader;
  let db: pg.Client;
  let session: Session;

  const orderId = anOrderId('CONSOLE-DISCARD');
  const refused = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
  const corrected = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
  /** An order whose letter is in doubt (seeded): no discard is offered for it. */
  const doubtful = anOrderId('CONSOLE-DOUBT');
  const doubtfulEventId = 'b0000000-0000-4000-8000-000000000001';

  const eventsOf = (id: string) =>
    status.json<StatusEvent>().filter((event) => event.orderId === id);
  const letters = async (id: string) =>
    (
      await db.query<{ reason: string; replayed: boolean; discardedBy: string | null }>(
        `SELECT reason, replayed_at IS NOT NULL AS replayed, discarded_by AS "discardedBy"
           FROM dead_letters WHERE order_id = $1 ORDER BY id`,
        [id],
      )
    ).rows;
  const actions = async () =>
    (
      await db.query<{ actor: string; outcome: string; orderId: string | null; details: object }>(
        `SELECT actor, outcome, order_id AS "orderId", details FROM operator_actions
          WHERE action = 'discard' ORDER BY id`,
      )
    ).rows;

  beforeAll(async () => {
    pipeline = await startPipeline('console_discard', { CONSOLE_TOKEN: TOKEN });
    [worker, status] = await Promise.all([
      pipeline.startWorker({ transport: { retry: { baseDelayMs: 50, maxDelayMs: 200 } } }),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
    ]);
    db = new pg.Client({ connectionString: pipeline.database.url });
    await db.connect();

    await sandboxControl(pipeline.sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments',
      status: 422,
      times: 1,
    });
    await pipeline.publish([refused, corrected].map((value) => ({ key: orderId, value })));
    const deadline = Date.now() + 30_000;
    while ((await letters(orderId)).length < 2) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the dead letters');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await db.query(
      `INSERT INTO orders (order_id, state, blocked_at, blocked_reason)
       VALUES ($1, 'open', now(), 'in_doubt: seeded')`,
      [doubtful],
    );
    await db.query(
      `INSERT INTO dead_letters (order_id, event_id, event_type, reason, error, topic, partition,
                                 "offset", key, value, headers, attempts)
       VALUES ($1, $2, 'order.payment_requested', 'in_doubt', 'PAYFLOW.NETWORK', 'seeded', 0, 1,
               $3, '{}', '{}', 1)`,
      [doubtful, doubtfulEventId, Buffer.from(doubtful)],
    );
    session = await signIn(worker.managementUrl, { token: TOKEN, operator: OPERATOR });
  }, 240_000);

  afterAll(async () => {
    await db?.end();
    await status?.stop();
    await pipeline?.stop();
  });

  it('offers a discard where it applies: not for a letter in doubt', async () => {
    expect((await letters(orderId)).map((letter) => letter.reason)).toEqual([
      'rejected_by_payflow',
      'blocked_by_earlier_failure',
    ]);
    const order = await session.get(`/console/orders/${encodeURIComponent(orderId)}`);
    expect(order.status).toBe(200);
    expect(order.html).toContain(`action="/console/dead-letters/${refused.eventId}/discard"`);
    const list = await session.get('/console/dead-letters');
    expect(list.html).toContain(`action="/console/dead-letters/${refused.eventId}/discard"`);
    expect(list.html).not.toContain(`action="/console/dead-letters/${doubtfulEventId}/discard"`);
    const inDoubt = await session.get(`/console/orders/${encodeURIComponent(doubtful)}`);
    expect(inDoubt.html).not.toContain('/discard"');
  });

  it('refuses a discard without its CSRF token (403), and changes nothing', async () => {
    const answer = await session.post(`/console/dead-letters/${refused.eventId}/discard`, {
      reason: 'no token',
    });
    expect(answer.status).toBe(403);
    expect((await letters(orderId)).map((letter) => letter.discardedBy)).toEqual([null, null]);
  });

  it('refuses a letter in doubt with why, and records the refusal', async () => {
    const answer = await session.post(`/console/dead-letters/${doubtfulEventId}/discard`, {
      _csrf: session.csrf,
      reason: 'we think it never arrived',
    });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain('Discard refused');
    expect(answer.html).toContain('those take a verdict: in-doubt resolve');
    expect(await letters(doubtful)).toEqual([
      { reason: 'in_doubt', replayed: false, discardedBy: null },
    ]);
  });

  it('discards the refused creation: recorded and audited; the corrected one takes effect', async () => {
    const answer = await session.post(`/console/dead-letters/${refused.eventId}/discard`, {
      _csrf: session.csrf,
      reason: 'Payflow refused it; the ERP sent it again',
    });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain('id="discard-notice"');
    expect(answer.html).toContain(`discarded by ${OPERATOR} (console)`);
    expect(answer.html).toContain('order unblocked; republished 1 dead letter(s)');

    await status.waitFor(() => eventsOf(orderId).some((e) => e.type === 'payment.created'));
    expect(eventsOf(orderId).map((event) => event.type)).toEqual([
      'payment.creation_failed',
      'event.discarded',
      'payment.created',
    ]);
    expect(eventsOf(orderId)[1]?.data).toEqual({
      eventId: refused.eventId,
      eventType: 'order.payment_requested',
      reason: 'Payflow refused it; the ERP sent it again',
      discardedBy: `${OPERATOR} (console)`,
      supersededBy: null,
    });
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(1);
    expect(await letters(orderId)).toEqual([
      { reason: 'rejected_by_payflow', replayed: false, discardedBy: `${OPERATOR} (console)` },
      { reason: 'blocked_by_earlier_failure', replayed: true, discardedBy: null },
    ]);

    // Again: nothing changes, and it says so.
    const again = await session.post(`/console/dead-letters/${refused.eventId}/discard`, {
      _csrf: session.csrf,
      reason: 'again',
    });
    expect(again.html).toContain('already discarded');
    expect(await actions()).toEqual([
      expect.objectContaining({ actor: OPERATOR, outcome: 'refused', orderId: doubtful }),
      expect.objectContaining({
        actor: OPERATOR,
        outcome: 'done',
        orderId,
        details: expect.objectContaining({ eventId: refused.eventId, result: 'discarded' }),
      }),
      expect.objectContaining({
        outcome: 'done',
        details: expect.objectContaining({ result: 'already' }),
      }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(eventsOf(orderId).filter((event) => event.type === 'event.discarded')).toHaveLength(1);
  });
});
