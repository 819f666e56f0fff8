/**
 * `privacy erase`, `privacy export` and RETENTION_PERSONAL_DATA (CONTRACT §10) against real
 * Postgres (a database of this file, built by the migrations). Two customers' orders are
 * stored the way the pipeline stores them: dead letters with their `.dlq` copies in the
 * outbox (written by the repositories), a replayed event, status events, webhooks, payments,
 * documents, an unexplained effect. One customer is erased; then every text, JSON and byte
 * column of every table is read back ("the whole database") and none of that customer's
 * personal data may be left, while every piece of the other's still is.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { silentLogger } from '../../src/logging/logger.js';
import type { Sql } from '../../src/database/database.js';
import { DeadLetterRepository } from '../../src/dead-letters/dead-letter.repository.js';
import { DeadLetterReplayService } from '../../src/dead-letters/replay/dead-letter-replay.service.js';
import { ErasedLetterReplayError } from '../../src/dead-letters/replay/erased-letter.error.js';
import { OrderRequeue } from '../../src/dead-letters/replay/order-requeue.js';
import type { DeadLetterReason } from '../../src/errors/app-error.js';
import { deadLetterTopicFor } from '../../src/messaging/dead-letter-headers.js';
import { OrderRepository } from '../../src/orders/order.repository.js';
import { OutboxRepository } from '../../src/outbox/outbox.repository.js';
import { DocumentRepository } from '../../src/payments/document.repository.js';
import { PaymentRepository } from '../../src/payments/payment.repository.js';
import { UnexplainedEffectRepository } from '../../src/payments/unexplained-effects/unexplained-effect.repository.js';
import {
  ErasureRefusedError,
  PrivacyEraseService,
} from '../../src/privacy/erase/privacy-erase.service.js';
import { PrivacyExportService } from '../../src/privacy/export/privacy-export.service.js';
import type { PersonalDataStores } from '../../src/privacy/personal-data-stores.js';
import { ERASED } from '../../src/privacy/personal-json.js';
import { WebhookInboxRepository } from '../../src/webhooks/inbox/webhook-inbox.repository.js';
import { PrivacyErasureRepository } from '../../src/privacy/privacy-erasure.repository.js';
import { PersonalDataRetentionJob } from '../../src/privacy/retention/personal-data-retention.job.js';
import { anEnvelope, paymentRequestedData } from '../support/builders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { openDatabase, type OpenDatabase } from '../outbox/outbox-test-kit.js';

const ORDERS_TOPIC = 'erp.orders.v1';
const DLQ_TOPIC = deadLetterTopicFor(ORDERS_TOPIC);
const STATUS_TOPIC = 'payflow.payment-status.v1';
const DAY_MS = 86_400_000;

interface Customer {
  readonly tag: string;
  readonly customerNumber: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone: string;
  readonly vin: string;
  readonly plate: string;
  readonly street: string;
  readonly document: string;
}

const KARI: Customer = {
  tag: 'A',
  customerNumber: 'C-1001',
  firstName: 'Kari',
  lastName: 'Nordmann',
  email: 'kari.nordmann@example.no',
  phone: '41234567',
  vin: 'YV1ABCDEF12345678',
  plate: 'EV12345',
  street: 'Storgata 1',
  document: 'Contract of Kari Nordmann, Storgata 1',
};

const OLA: Customer = {
  tag: 'B',
  customerNumber: 'C-2002',
  firstName: 'Ola',
  lastName: 'Hansen',
  email: 'ola.hansen@example.no',
  phone: '98765432',
  vin: 'WVWZZZ1JZXW000002',
  plate: 'BT54321',
  street: 'Kongens gate 9',
  document: 'Contract of Ola Hansen, Kongens gate 9',
};

/** What must disappear with a customer (and stay with the other). */
function personalValues(customer: Customer): string[] {
  return [
    customer.customerNumber,
    customer.firstName,
    customer.lastName,
    customer.email,
    customer.phone,
    customer.vin,
    customer.plate,
    customer.street,
    Buffer.from(customer.document).toString('base64'),
  ];
}

let nextOffset = 1;

describe('personal data: export, erase, retention', () => {
  let testDb: TestDatabase;
  let db: OpenDatabase;
  let sql: Sql;
  const letters = new DeadLetterRepository();
  const outbox = new OutboxRepository();
  let stores: PersonalDataStores;
  const erasures = new PrivacyErasureRepository();
  let erase: PrivacyEraseService;
  let exporter: PrivacyExportService;

  const paymentRequest = (customer: Customer, orderId: string) =>
    anEnvelope(
      'order.payment_requested',
      paymentRequestedData({
        customer: {
          type: 'person',
          firstName: customer.firstName,
          lastName: customer.lastName,
          email: customer.email,
          phone: { countryCode: '+47', number: customer.phone },
          customerNumber: customer.customerNumber,
          billingAddress: { street: customer.street, postalCode: '0155', city: 'Oslo' },
        },
        vehicles: [{ role: 'new', numberPlate: customer.plate, vin: customer.vin, brand: 'Volvo' }],
      }),
      { orderId },
    );

  /** A dead letter as the sink stores it: the row, and its `.dlq` copy in the outbox. */
  const deadLetter = async (
    orderId: string,
    envelope: { eventId: string; type: string },
    reason: DeadLetterReason,
    error: string,
    replayedAt: Date | null = null,
  ): Promise<void> => {
    const value = Buffer.from(JSON.stringify(envelope));
    const offset = String(nextOffset++);
    const headers = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    await db.database.transaction(async (tx) => {
      await letters.insert(
        tx,
        {
          message: {
            topic: ORDERS_TOPIC,
            partition: 0,
            offset,
            key: Buffer.from(orderId),
            value,
            headers,
            timestamp: String(Date.now()),
          },
          reason,
          error,
          attempts: 1,
          orderId,
          eventId: envelope.eventId,
          eventType: envelope.type,
          failedAt: new Date(),
        },
        { ...headers, 'x-dlq-reason': reason, 'x-dlq-error': error },
      );
      await outbox.add(tx, [
        {
          topic: DLQ_TOPIC,
          key: orderId,
          value,
          headers: { ...headers, 'x-dlq-reason': reason, 'x-dlq-error': error },
        },
      ]);
      await new OrderRepository().block(tx, orderId, `${reason}: event ${envelope.eventId}`);
    });
    if (replayedAt !== null) {
      await sql.execute('UPDATE dead_letters SET replayed_at = $2 WHERE event_id = $1', [
        envelope.eventId,
        replayedAt,
      ]);
    }
  };

  /**
   * A customer's two orders. `<tag>1`: a payment request that was rejected once, replayed
   * (its copy on the orders topic published) and took effect (payment, document, status
   * events, a webhook, an unexplained effect), then a document refused and a cancellation
   * parked behind it. `<tag>2`: a payment request that never parsed, so the order row holds
   * no customer number and only the dead letter names it.
   */
  const seedCustomer = async (customer: Customer): Promise<{ one: string; two: string }> => {
    const one = `SO-${customer.tag}1`;
    const two = `SO-${customer.tag}2`;
    const request = paymentRequest(customer, one);
    await deadLetter(
      one,
      request,
      'rejected_by_payflow',
      `Payflow 422 validation: email ${customer.email} is not deliverable`,
      new Date(),
    );
    await outbox.add(sql, [
      { topic: ORDERS_TOPIC, key: one, value: Buffer.from(JSON.stringify(request)) },
    ]);
    await sql.execute(
      `UPDATE orders SET customer_number = $2, organization_id = 'org-1', order_number = $3,
              currency = 'NOK', blocked_at = NULL, blocked_reason = NULL
        WHERE order_id = $1`,
      [one, customer.customerNumber, `N-${one}`],
    );
    const [payment] = await sql.query<{ id: string }>(
      `INSERT INTO payments (order_id, organization_id, payflow_id, state, provider_status,
                             status, currency, total_gross_minor, total_net_minor, payment_link,
                             webhook_token, api_key_hash)
       VALUES ($1, 'org-1', $2, 'created', 'SENT', 'pending', 'NOK', 124950, 99960, $3, $4, $5)
       RETURNING id::text AS id`,
      [
        one,
        `pf-${customer.tag}`,
        `https://pay.example.test/p/pf-${customer.tag}`,
        `whk-${customer.tag}`,
        Buffer.from('hash'),
      ],
    );
    if (payment === undefined) throw new Error('no payment');
    await sql.execute(
      `INSERT INTO documents (payment_id, document_ref, payflow_document_id, file_name,
                              content_type, size)
       VALUES ($1, 'DOC-1', $2, $3, 'application/pdf', 1200)`,
      [payment.id, `doc-${customer.tag}`, `contract-${customer.lastName}.pdf`],
    );
    await sql.execute(
      `INSERT INTO unexplained_effects (order_id, payment_id, kind, payflow_id, file_name,
                                        first_seen_by)
       VALUES ($1, $2, 'document', $3, $4, 'webhook')`,
      [one, payment.id, `fx-${customer.tag}`, `scan-${customer.lastName}.pdf`],
    );
    await sql.execute(
      `INSERT INTO webhook_inbox (payment_id, kind, dedupe_key, body, headers, verdict,
                                  processed_at)
       VALUES ($1, 'payment', $2, $3, $4::jsonb, 'accepted', now())`,
      [
        payment.id,
        `dedupe-${customer.tag}`,
        Buffer.from(
          JSON.stringify({
            deliveryId: `d-${customer.tag}`,
            event: 'payment.updated',
            paymentId: `pf-${customer.tag}`,
            paymentStatus: 'SENT',
            payer: { name: `${customer.firstName} ${customer.lastName}`, email: customer.email },
          }),
        ),
        JSON.stringify({
          'x-payflow-delivery': `d-${customer.tag}`,
          'x-payer-phone': customer.phone,
        }),
      ],
    );
    const statusEvent = (type: string, data: Record<string, unknown>) => ({
      topic: STATUS_TOPIC,
      key: one,
      value: JSON.stringify({
        eventId: crypto.randomUUID(),
        type,
        occurredAt: new Date().toISOString(),
        organizationId: 'org-1',
        orderId: one,
        paymentId: `pf-${customer.tag}`,
        data,
      }),
      headers: { 'content-type': 'application/json', 'x-event-type': type },
    });
    await outbox.add(sql, [
      statusEvent('payment.created', {
        sourceEventId: request.eventId,
        paymentLink: `https://pay.example.test/p/pf-${customer.tag}`,
        currency: 'NOK',
        totalGrossAmount: '1249.50',
      }),
      statusEvent('document.attached', {
        documentRef: 'DOC-1',
        fileName: `contract-${customer.lastName}.pdf`,
      }),
    ]);
    await sql.execute('UPDATE outbox SET published_at = now() WHERE key = $1', [one]);

    const document = anEnvelope(
      'order.document_attached',
      {
        documentRef: 'DOC-2',
        fileName: `id-card-${customer.lastName}.pdf`,
        contentType: 'application/pdf',
        contentBase64: Buffer.from(customer.document).toString('base64'),
      },
      { orderId: one },
    );
    await deadLetter(one, document, 'rejected_by_payflow', 'Payflow 413 file too large');
    const cancel = anEnvelope(
      'order.cancelled',
      { reason: `${customer.firstName} ${customer.lastName} bought elsewhere` },
      { orderId: one },
    );
    await deadLetter(
      one,
      cancel,
      'blocked_by_earlier_failure',
      `blocked behind ${document.eventId}`,
    );

    const request2 = paymentRequest(customer, two);
    const broken = { ...request2, data: { ...request2.data, currency: 'KRONER' } };
    await deadLetter(
      two,
      broken,
      'invalid_event',
      'invalid order.payment_requested: data.currency: must be an ISO 4217 code such as NOK',
    );
    return { one, two };
  };

  /** Every text, JSON and byte column of every table, as one text. */
  const dumpDatabase = async (): Promise<string> => {
    const columns = await sql.query<{ table: string; column: string }>(
      `SELECT c.table_name AS "table", c.column_name AS "column"
         FROM information_schema.columns c
         JOIN information_schema.tables t
           ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
          AND c.data_type IN ('text', 'character', 'character varying', 'jsonb', 'json', 'bytea')
        ORDER BY 1, 2`,
    );
    const parts: string[] = [];
    for (const { table, column } of columns) {
      const rows = await sql.query<{ value: unknown }>(
        `SELECT "${column}" AS value FROM "${table}" ORDER BY 1`,
      );
      for (const { value } of rows) {
        if (value === null) continue;
        parts.push(
          `${table}.${column}=` +
            (Buffer.isBuffer(value)
              ? value.toString('utf8')
              : typeof value === 'string'
                ? value
                : JSON.stringify(value)),
        );
      }
    }
    return parts.join('\n');
  };

  const structure = () =>
    Promise.all([
      sql.query(
        `SELECT id, order_id, event_id, event_type, reason, replayed_at, discarded_at, "offset"
           FROM dead_letters ORDER BY id`,
      ),
      sql.query('SELECT id, topic, key, published_at, bucket FROM outbox ORDER BY id'),
      sql.query(
        `SELECT id, order_id, payflow_id, state, status, total_gross_minor, total_net_minor
           FROM payments ORDER BY id`,
      ),
      sql.query('SELECT order_id, state, currency, order_number FROM orders ORDER BY order_id'),
      sql.query('SELECT id, payment_id, kind, processed_at FROM webhook_inbox ORDER BY id'),
    ]);

  let kari: { one: string; two: string };
  let ola: { one: string; two: string };

  beforeAll(async () => {
    testDb = await createTestDatabase('privacy');
    db = await openDatabase(testDb.url, 4);
    sql = db.database.sql;
    stores = {
      orders: new OrderRepository(),
      payments: new PaymentRepository(),
      documents: new DocumentRepository(),
      effects: new UnexplainedEffectRepository(),
      letters,
      outbox,
      webhooks: new WebhookInboxRepository(db.database),
    };
    erase = new PrivacyEraseService(db.database, stores, erasures, {
      ordersTopic: ORDERS_TOPIC,
    });
    exporter = new PrivacyExportService(db.database, stores);
    kari = await seedCustomer(KARI);
    ola = await seedCustomer(OLA);
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it('exports every piece of a customer’s personal data, found by the customer number', async () => {
    const exported = await exporter.export({ kind: 'customer_number', customerNumber: 'C-1001' });
    expect(exported.orders.map((order) => order.orderId)).toEqual([kari.one, kari.two]);
    const text = JSON.stringify(exported);
    for (const value of [...personalValues(KARI), 'https://pay.example.test/p/pf-A']) {
      expect(text).toContain(value);
    }
    for (const value of personalValues(OLA)) expect(text).not.toContain(value);
  });

  let recordId: string;

  it('erases one customer everywhere and keeps the other whole', async () => {
    const before = await structure();
    const dumpBefore = await dumpDatabase();
    for (const value of [...personalValues(KARI), ...personalValues(OLA)]) {
      expect(dumpBefore).toContain(value);
    }

    const outcome = await erase.erase({
      selection: { kind: 'customer_number', customerNumber: 'C-1001' },
      erasedBy: 'Test DPO',
    });
    expect(outcome.orderIds).toEqual([kari.one, kari.two]);
    expect(outcome.counts).toEqual({
      deadLetters: 4,
      // 4 .dlq copies, the replayed request, payment.created and document.attached
      outbox: 7,
      webhooks: 1,
      customerNumbers: 1,
      paymentLinks: 1,
      documentNames: 1,
      effectFileNames: 1,
    });
    expect(outcome.record?.erasedBy).toBe('Test DPO');
    recordId = outcome.record?.id ?? '';

    const dump = await dumpDatabase();
    for (const value of personalValues(KARI)) expect(dump).not.toContain(value);
    expect(dump).not.toContain('https://pay.example.test/p/pf-A');
    for (const value of personalValues(OLA)) expect(dump).toContain(value);
    expect(dump).toContain('https://pay.example.test/p/pf-B');

    // Ids, amounts, states and the order of events stay as they were.
    expect(await structure()).toEqual(before);
    const [record] = await sql.query<{ scope: string; subject: string; orderIds: string[] }>(
      `SELECT scope, subject, order_ids AS "orderIds" FROM privacy_erasures WHERE id = $1`,
      [recordId],
    );
    expect(record).toEqual({
      scope: 'customer_number',
      subject: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      orderIds: [kari.one, kari.two],
    });
  });

  it('leaves valid JSON with ids, types and amounts where personal data was', async () => {
    const rows = await sql.query<{ value: Buffer; eventType: string; erased: boolean }>(
      `SELECT value, event_type AS "eventType", erased_at IS NOT NULL AS erased
         FROM dead_letters WHERE order_id = $1 ORDER BY id`,
      [kari.one],
    );
    expect(rows.map((row) => row.erased)).toEqual([true, true, true]);
    const [request] = rows.map(
      (row) => JSON.parse(row.value.toString('utf8')) as Record<string, unknown>,
    );
    expect(request).toMatchObject({
      type: 'order.payment_requested',
      orderId: kari.one,
      data: {
        orderNumber: 'ON-10042',
        currency: 'NOK',
        customer: { email: ERASED, lastName: ERASED, phone: { number: ERASED } },
        vehicles: [{ role: 'new', vin: ERASED, numberPlate: ERASED, brand: 'Volvo' }],
        lines: [{ description: ERASED, quantity: expect.anything() as unknown }],
      },
    });
    const [error] = await sql.query<{ error: string }>(
      `SELECT error FROM dead_letters WHERE order_id = $1 ORDER BY id LIMIT 1`,
      [kari.one],
    );
    expect(error?.error).toBe(`Payflow 422 validation: email ${ERASED} is not deliverable`);
  });

  it('changes nothing the second time, and says when it was erased', async () => {
    const dump = await dumpDatabase();
    const again = await erase.erase({
      selection: { kind: 'customer_number', customerNumber: 'C-1001' },
      erasedBy: 'Someone else',
    });
    expect(again.changed).toBe(0);
    expect(again.record).toBeNull();
    expect(again.previous?.id).toBe(recordId);
    const byOrder = await erase.erase({
      selection: { kind: 'order', orderId: kari.two },
      erasedBy: 'Someone else',
    });
    expect(byOrder.changed).toBe(0);
    expect(byOrder.previous?.id).toBe(recordId);
    const unknown = await erase.erase({
      selection: { kind: 'order', orderId: 'SO-NOBODY' },
      erasedBy: 'Someone else',
    });
    expect(unknown).toMatchObject({ orderIds: [], changed: 0, record: null, previous: null });
    expect(await dumpDatabase()).toBe(dump);
    const [count] = await sql.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM privacy_erasures',
    );
    expect(count?.n).toBe(1);
  });

  it('refuses to replay an erased dead letter, and still replays the other customer’s', async () => {
    const flusher = {
      flush: () => Promise.resolve({ drained: true, published: 0, remaining: 0 }),
    };
    const replay = new DeadLetterReplayService(db.database, letters, outbox, flusher, {
      topic: ORDERS_TOPIC,
    });
    const refused = await replay.plan({ orderId: kari.one });
    expect(refused.messages).toBe(0);
    expect(refused.refused?.map((group) => group.orderId)).toEqual([kari.one]);
    const outboxBefore = await sql.query('SELECT id FROM outbox ORDER BY id');
    const result = await replay.replay({ orderId: kari.one });
    expect(result.messages).toBe(0);
    expect(await sql.query('SELECT id FROM outbox ORDER BY id')).toEqual(outboxBefore);

    // Past the plan (a discard republishing parked events, a replay racing an erasure): refused.
    const requeue = new OrderRequeue(letters, outbox, new OrderRepository(), ORDERS_TOPIC);
    const attempt = db.database.transaction((tx) => requeue.order(tx, kari.one));
    await expect(attempt).rejects.toBeInstanceOf(ErasedLetterReplayError);
    await expect(attempt).rejects.toMatchObject({ code: 'REPLAY.ERASED' });
    const failure = await attempt.then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure instanceof Error ? failure.message : '').toMatch(
      /^order SO-A1 is not replayed: the personal data of dead letter #\d+ was erased/,
    );

    const plan = await replay.plan({ orderId: ola.one });
    expect(plan.refused).toEqual([]);
    expect(plan.messages).toBe(2);
  });

  it('exports nothing personal of an erased customer, and all of the other', async () => {
    const erased = JSON.stringify(await exporter.export({ kind: 'order', orderId: kari.one }));
    for (const value of personalValues(KARI)) expect(erased).not.toContain(value);
    const other = JSON.stringify(
      await exporter.export({ kind: 'customer_number', customerNumber: 'C-2002' }),
    );
    for (const value of personalValues(OLA)) expect(other).toContain(value);
  });

  it('refuses, changing nothing, while a replayed event of the order waits in the outbox', async () => {
    await outbox.add(sql, [{ topic: ORDERS_TOPIC, key: ola.two, value: '{"pending":true}' }]);
    const dump = await dumpDatabase();
    await expect(
      erase.erase({
        selection: { kind: 'customer_number', customerNumber: 'C-2002' },
        erasedBy: 'x',
      }),
    ).rejects.toBeInstanceOf(ErasureRefusedError);
    expect(await dumpDatabase()).toBe(dump);
    await sql.execute('DELETE FROM outbox WHERE key = $1 AND topic = $2 AND published_at IS NULL', [
      ola.two,
      ORDERS_TOPIC,
    ]);
  });

  describe('RETENTION_PERSONAL_DATA', () => {
    const retention = (retentionMs: number) =>
      new PersonalDataRetentionJob(
        new SchedulerRegistry(),
        db.database,
        stores.orders,
        letters,
        erase,
        { retentionMs, autoStart: false },
        silentLogger(),
      );

    it('erases the orders untouched for longer, the same way, and only once', async () => {
      const old = new Date(Date.now() - 100 * DAY_MS);
      // Ola's second order has not been touched for 100 days; the first was, recently.
      await sql.execute('UPDATE orders SET updated_at = $2 WHERE order_id = $1', [ola.two, old]);
      await sql.execute('UPDATE dead_letters SET failed_at = $2 WHERE order_id = $1', [
        ola.two,
        old,
      ]);
      const job = retention(90 * DAY_MS);
      const first = await job.run();
      expect(first).toMatchObject({ ran: true, orders: 1, changed: 2 });
      expect(first.counts).toMatchObject({ deadLetters: 1, outbox: 1 });

      const two = JSON.stringify(await exporter.export({ kind: 'order', orderId: ola.two }));
      for (const value of personalValues(OLA)) expect(two).not.toContain(value);
      // The order touched recently keeps everything.
      const dump = await dumpDatabase();
      for (const value of personalValues(OLA)) expect(dump).toContain(value);

      const second = await job.run();
      expect(second).toMatchObject({ ran: true, orders: 0, changed: 0 });
      const [record] = await sql.query<{ erasedBy: string; trigger: string; orderIds: string[] }>(
        `SELECT erased_by AS "erasedBy", trigger, order_ids AS "orderIds"
           FROM privacy_erasures ORDER BY id DESC LIMIT 1`,
      );
      expect(record).toEqual({ erasedBy: 'retention', trigger: 'retention', orderIds: [ola.two] });
    });
  });
});
