/**
 * The order page's "Erase personal data" (`POST /console/orders/{orderId}/privacy/erase`,
 * form: `confirm=erase`) and the audit of an opened dead letter, over plain HTTP without a
 * browser, against the real worker (Postgres of its own, built by the migrations; the run's
 * Kafka; the Payflow sandbox). An operator signs in with the token as a person does; a
 * viewer's session is opened in the worker's own session store (as an OpenID sign-in
 * would: test/console/oidc.test.ts drives that door). The order and its dead letter (the
 * ERP's event with the customer's e-mail) are written by SQL of the test's own.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { outboxBucket } from '../../src/outbox/outbox.repository.js';
import type { Worker } from '../../src/worker.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { signIn, viewer, type Session } from './console-session.js';

const TOKEN = 'console-token-for-the-erase-test-0123456789';
const OPERATOR = 'Olga Erase';
const EMAIL = 'kari@example.com';

describe('erasing an order’s personal data in the console, over HTTP', () => {
  let pipeline: Pipeline;
  let worker: Worker;
  let db: pg.Client;
  let operator: Session;
  let reader: Session;

  const orderId = anOrderId('CONSOLE-ERASE');
  const event = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
  const erasePath = `/console/orders/${encodeURIComponent(orderId)}/privacy/erase`;

  const letter = async () =>
    (
      await db.query<{ id: string; value: string; erased: boolean }>(
        `SELECT id::text AS id, convert_from(value, 'UTF8') AS value, erased_at IS NOT NULL AS erased
           FROM dead_letters WHERE order_id = $1`,
        [orderId],
      )
    ).rows[0];
  const actions = async (action: string) =>
    (
      await db.query<{ actor: string; outcome: string; orderId: string | null; details: object }>(
        `SELECT actor, outcome, order_id AS "orderId", details FROM operator_actions
          WHERE action = $1 ORDER BY id`,
        [action],
      )
    ).rows;

  beforeAll(async () => {
    pipeline = await startPipeline('console_erase', { CONSOLE_TOKEN: TOKEN });
    worker = await pipeline.startWorker();
    db = new pg.Client({ connectionString: pipeline.database.url });
    await db.connect();
    await db.query(
      `INSERT INTO orders (order_id, organization_id, order_number, state, customer_number)
       VALUES ($1, 'org-1', 'ON-ERASE-1', 'open', 'C-4711')`,
      [orderId],
    );
    await db.query(
      `INSERT INTO dead_letters (order_id, event_id, event_type, reason, error, topic, partition,
                                 "offset", key, value, headers, attempts)
       VALUES ($1, $2, 'order.payment_requested', 'rejected_by_payflow', 'PAYFLOW.REJECTED',
               'erp.orders.v1', 0, 1, $3, $4, '{}', 1)`,
      [orderId, event.eventId, Buffer.from(orderId), Buffer.from(JSON.stringify(event))],
    );
    [operator, reader] = await Promise.all([
      signIn(worker.managementUrl, { token: TOKEN, operator: OPERATOR }),
      viewer(worker),
    ]);
  }, 240_000);

  afterAll(async () => {
    await db?.end();
    await pipeline?.stop();
  });

  it('shows a viewer the order without any action panel or form', async () => {
    const page = await reader.get(`/console/orders/${encodeURIComponent(orderId)}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('viewer (read only)');
    expect(page.html).not.toContain('What can be done');
    expect(page.html).not.toContain('class="actions"');
    expect(page.html).not.toContain(erasePath);
    expect(page.html).not.toContain('/contact"');
    // The operator's page offers the erasure, with its confirmation.
    const offered = await operator.get(`/console/orders/${encodeURIComponent(orderId)}`);
    expect(offered.html).toContain('What can be done');
    expect(offered.html).toContain(`action="${erasePath}"`);
    expect(offered.html).toContain('name="confirm" type="checkbox" value="erase" required');
  });

  it('refuses a viewer’s erasure (403), records the refusal and changes nothing', async () => {
    const answer = await reader.post(erasePath, { _csrf: reader.csrf, confirm: 'erase' });
    expect(answer.status).toBe(403);
    expect((await letter())?.value).toContain(EMAIL);
    expect(await actions('erase_personal_data')).toEqual([]);
    const refused = await actions('action_refused');
    expect(refused).toEqual([
      expect.objectContaining({ actor: 'Vera Viewer', outcome: 'refused', orderId }),
    ]);
  });

  it('refuses an erasure without confirmation, and changes nothing', async () => {
    const answer = await operator.post(erasePath, { _csrf: operator.csrf });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain('Not erased: the erasure was not confirmed');
    expect((await letter())?.value).toContain(EMAIL);
    expect(await actions('erase_personal_data')).toEqual([
      expect.objectContaining({
        outcome: 'refused',
        details: { why: 'CONSOLE.ERASE_NOT_CONFIRMED' },
      }),
    ]);
  });

  it('erases the order’s personal data for an operator, recorded with counts only', async () => {
    const answer = await operator.post(erasePath, { _csrf: operator.csrf, confirm: 'erase' });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain('id="erase-notice"');
    expect(answer.html).toMatch(/Erased the personal data of order \S+: \d+ row\(s\) changed/);
    const stored = await letter();
    expect(stored?.erased).toBe(true);
    expect(stored?.value).not.toContain(EMAIL);
    expect(stored?.value).toContain(event.eventId);
    const customer = await db.query<{ customerNumber: string | null }>(
      `SELECT customer_number AS "customerNumber" FROM orders WHERE order_id = $1`,
      [orderId],
    );
    expect(customer.rows[0]?.customerNumber).toBeNull();
    const done = (await actions('erase_personal_data')).filter((a) => a.outcome === 'done');
    expect(done).toEqual([
      expect.objectContaining({
        actor: OPERATOR,
        orderId,
        details: expect.objectContaining({ result: 'erased', deadLetters: 1, customerNumbers: 1 }),
      }),
    ]);
    expect(JSON.stringify(done)).not.toContain(EMAIL);
    expect(JSON.stringify(done)).not.toContain('C-4711');
    const erasures = await db.query<{ erasedBy: string }>(
      `SELECT erased_by AS "erasedBy" FROM privacy_erasures WHERE subject = $1`,
      [orderId],
    );
    expect(erasures.rows).toEqual([{ erasedBy: `${OPERATOR} (console)` }]);
  });

  it('says nothing is left to erase the second time, and by whom it was erased', async () => {
    const answer = await operator.post(erasePath, { _csrf: operator.csrf, confirm: 'erase' });
    expect(answer.status).toBe(200);
    expect(answer.html).toMatch(/Nothing left to erase: erased on \S+ by Olga Erase \(console\)/);
    const done = (await actions('erase_personal_data')).filter((a) => a.outcome === 'done');
    expect(done).toHaveLength(2);
    expect(done[1]?.details).toEqual(
      expect.objectContaining({ result: 'nothing_left', changed: 0, erasure: null }),
    );
    const erasures = await db.query(`SELECT 1 FROM privacy_erasures WHERE subject = $1`, [orderId]);
    expect(erasures.rowCount).toBe(1);
  });

  it('refuses, changing nothing, while a replayed event of the order waits in the outbox', async () => {
    const waiting = anOrderId('CONSOLE-ERASE-WAIT');
    const waitingEvent = anEnvelope('order.payment_requested', paymentRequestedData(), {
      orderId: waiting,
    });
    await db.query(`INSERT INTO orders (order_id, state) VALUES ($1, 'open')`, [waiting]);
    await db.query(
      `INSERT INTO dead_letters (order_id, event_id, event_type, reason, error, topic, partition,
                                 "offset", key, value, headers, attempts)
       VALUES ($1, $2, 'order.payment_requested', 'rejected_by_payflow', 'PAYFLOW.REJECTED',
               'erp.orders.v1', 0, 2, $3, $4, '{}', 1)`,
      [
        waiting,
        waitingEvent.eventId,
        Buffer.from(waiting),
        Buffer.from(JSON.stringify(waitingEvent)),
      ],
    );
    const {
      rows: [pending],
    } = await db.query<{ id: string }>(
      `INSERT INTO outbox (bucket, topic, key, value) VALUES ($1, $2, $3, $4)
       RETURNING id::text AS id`,
      [
        outboxBucket(waiting),
        pipeline.topics.orders,
        waiting,
        Buffer.from(JSON.stringify(waitingEvent)),
      ],
    );
    // Held by this test while the erasure is asked (the relay skips a locked row), then
    // removed, so that the relay never publishes it.
    const holder = new pg.Client({ connectionString: pipeline.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      const locked = await holder.query(
        `SELECT 1 FROM outbox WHERE id = $1::bigint AND published_at IS NULL FOR UPDATE`,
        [pending?.id],
      );
      expect(locked.rowCount).toBe(1);
      const answer = await operator.post(
        `/console/orders/${encodeURIComponent(waiting)}/privacy/erase`,
        { _csrf: operator.csrf, confirm: 'erase' },
      );
      expect(answer.status).toBe(200);
      expect(answer.html).toContain('Not erased (PRIVACY.REPLAY_PENDING)');
      await holder.query(`DELETE FROM outbox WHERE id = $1::bigint`, [pending?.id]);
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    const stored = await db.query<{ value: string; erased: boolean }>(
      `SELECT convert_from(value, 'UTF8') AS value, erased_at IS NOT NULL AS erased
         FROM dead_letters WHERE order_id = $1`,
      [waiting],
    );
    expect(stored.rows[0]?.value).toContain(EMAIL);
    expect(stored.rows[0]?.erased).toBe(false);
    const refused = (await actions('erase_personal_data')).filter((a) => a.orderId === waiting);
    expect(refused).toEqual([
      expect.objectContaining({ outcome: 'refused', details: { why: 'PRIVACY.REPLAY_PENDING' } }),
    ]);
  });

  it('records one audit row per opening of a dead letter, without its payload', async () => {
    const stored = await letter();
    const before = await actions('view_dead_letter');
    const page = await reader.get(`/console/dead-letters/${stored?.id ?? ''}`);
    expect(page.status).toBe(200);
    const after = await actions('view_dead_letter');
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)).toEqual({
      actor: 'Vera Viewer',
      outcome: 'done',
      orderId,
      details: { deadLetter: stored?.id, eventId: event.eventId },
    });
  });
});
