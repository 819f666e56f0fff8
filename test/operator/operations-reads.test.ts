/**
 * The reads behind the console's operations pages, against a real, migrated database:
 * the dead-letter list (filters, pages, the message as received with contact data masked),
 * the settlement nights by organization (pulled, changed, missing, forgotten), and the
 * overview (counts per hour from the tables, live gauges sampled from the registry).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Counter, Gauge, Registry } from 'prom-client';
import {
  DeadLetterListQuery,
  parseDeadLetterFilter,
} from '../../src/operator/dead-letters/dead-letter-list.query.js';
import { OverviewSampler } from '../../src/operator/overview/overview-sampler.js';
import { OverviewQuery, hourlySeries } from '../../src/operator/overview/overview.query.js';
import { SettlementNightsQuery } from '../../src/operator/settlements/settlement-nights.query.js';
import type { Sql } from '../../src/database/database.js';
import { hoursAgo, insertDeadLetter, insertOrder } from '../cli/cli-test-kit.js';
import { openDatabase, type OpenDatabase } from '../outbox/outbox-test-kit.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const CUSTOMER_EVENT = (orderId: string): string =>
  JSON.stringify({
    eventId: randomUUID(),
    type: 'order.payment_requested',
    orderId,
    data: {
      orderNumber: 'SO-1',
      customer: {
        firstName: 'Kari',
        lastName: 'Nordmann',
        email: 'kari.nordmann@example.com',
        phone: { countryCode: '+47', number: '91234567' },
        billingAddress: { street: 'Storgata 1', city: 'Oslo', countryCode: 'NO' },
      },
      vehicles: [{ role: 'new', numberPlate: 'EL 12345', vin: 'WVWZZZE2ZPE012345' }],
      invoiceComments: 'Ring +47 412 34 567 eller kari@example.no',
    },
  });

async function insertNight(
  sql: Sql,
  night: { org: string; date: string; status: string; version?: number; error?: string },
): Promise<void> {
  let fileId: string | null = null;
  if (night.version !== undefined) {
    const [row] = await sql.query<{ id: string }>(
      `INSERT INTO settlement_files (organization_id, date_from, date_to, format, version, sha256,
                                     size_bytes, row_count, bad_row_count, content_type, trigger)
       VALUES ($1, $2::date, $2::date, 'standard', $3, repeat('a', 64), 100, 7, 1, 'text/csv', 'cron')
       RETURNING id::text AS id`,
      [night.org, night.date, night.version],
    );
    fileId = row?.id ?? null;
  }
  await sql.execute(
    `INSERT INTO settlement_nights (organization_id, settlement_date, format, status, tracked_by,
                                    file_id, attempts, last_error, pulled_at)
     VALUES ($1, $2::date, 'standard', $3, 'cron', $4::uuid, 2, $5,
             CASE WHEN $3 = 'pulled' THEN now() END)`,
    [night.org, night.date, night.status, fileId, night.error ?? null],
  );
}

describe('the operations pages’ reads', () => {
  let testDb: TestDatabase;
  let db: OpenDatabase;

  beforeAll(async () => {
    testDb = await createTestDatabase('operations_reads');
    db = await openDatabase(testDb.url, 4);
    const sql = db.database.sql;
    await insertOrder(sql, 'ORD-A', { organizationId: 'org-a', blocked: true });
    await insertOrder(sql, 'ORD-B', { organizationId: 'org-b', blocked: true });
    await insertDeadLetter(sql, {
      orderId: 'ORD-A',
      reason: 'rejected_by_payflow',
      failedAt: hoursAgo(30),
    });
    await insertDeadLetter(sql, {
      orderId: 'ORD-A',
      reason: 'blocked_by_earlier_failure',
      failedAt: hoursAgo(5),
    });
    await insertDeadLetter(sql, {
      orderId: 'ORD-B',
      reason: 'mapping_failed',
      failedAt: hoursAgo(2),
      value: CUSTOMER_EVENT('ORD-B'),
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    await insertDeadLetter(sql, {
      orderId: 'ORD-B',
      reason: 'mapping_failed',
      failedAt: hoursAgo(1),
      replayedAt: new Date(),
    });
    await insertDeadLetter(sql, {
      orderId: null,
      reason: 'invalid_json',
      failedAt: hoursAgo(3),
      value: '{oops',
    });
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  describe('dead letters', () => {
    it('lists the letters that wait, newest first, with the order’s organization', async () => {
      const query = new DeadLetterListQuery(db.database);
      const page = await query.list({}, '');
      expect(page.letters.map((letter) => [letter.orderId, letter.reason])).toEqual([
        ['ORD-B', 'mapping_failed'],
        [null, 'invalid_json'],
        ['ORD-A', 'blocked_by_earlier_failure'],
        ['ORD-A', 'rejected_by_payflow'],
      ]);
      expect(page.letters[0]).toMatchObject({ organizationId: 'org-b', replayedAt: null });
      expect(page.letters[0]?.origin).toMatch(/^erp\.orders\.v1\/0@\d+$/);
      expect(page.next).toBeNull();
    });

    it('filters by reason, organization, time range and state', async () => {
      const query = new DeadLetterListQuery(db.database);
      const reasons = async (filter: Parameters<DeadLetterListQuery['list']>[0]) =>
        (await query.list(filter, '')).letters.map((letter) => letter.reason);
      expect(await reasons({ reason: 'mapping_failed' })).toEqual(['mapping_failed']);
      expect(await reasons({ organizationId: 'org-a' })).toEqual([
        'blocked_by_earlier_failure',
        'rejected_by_payflow',
      ]);
      expect(await reasons({ from: hoursAgo(4), to: hoursAgo(1.5) })).toEqual([
        'mapping_failed',
        'invalid_json',
      ]);
      expect(await reasons({ state: 'replayed' })).toEqual(['mapping_failed']);
      expect(await reasons({ state: 'all', organizationId: 'org-b' })).toEqual([
        'mapping_failed',
        'mapping_failed',
      ]);
    });

    it('pages with a cursor, and ignores a cursor it did not give', async () => {
      const query = new DeadLetterListQuery(db.database);
      const first = await query.list({ state: 'all' }, '', 2);
      expect(first.letters).toHaveLength(2);
      expect(first.next).not.toBeNull();
      const second = await query.list({ state: 'all' }, first.next ?? '', 2);
      const third = await query.list({ state: 'all' }, second.next ?? '', 2);
      const ids = [...first.letters, ...second.letters, ...third.letters].map(
        (letter) => letter.id,
      );
      expect(new Set(ids).size).toBe(5);
      expect(third.next).toBeNull();
      expect((await query.list({ state: 'all' }, 'not-a-cursor', 2)).letters[0]?.id).toBe(
        first.letters[0]?.id,
      );
    });

    it('parses the filter form and names what it could not read', () => {
      const form = new Map([
        ['reason', 'in_doubt'],
        ['org', 'org-a'],
        ['from', '2026-11-01'],
        ['to', '2026-11-02T10:00'],
        ['state', 'all'],
      ]);
      const parsed = parseDeadLetterFilter((name) => form.get(name) ?? '');
      expect(parsed.problems).toEqual([]);
      expect(parsed.filter).toEqual({
        reason: 'in_doubt',
        organizationId: 'org-a',
        from: new Date('2026-11-01T00:00:00Z'),
        to: new Date('2026-11-02T10:00:00Z'),
        state: 'all',
      });
      const bad = new Map([
        ['reason', 'lost'],
        ['from', 'yesterday'],
        ['state', 'gone'],
      ]);
      expect(parseDeadLetterFilter((name) => bad.get(name) ?? '').problems).toEqual([
        'reason',
        'from',
        'state',
      ]);
    });

    it('shows the message as received: headers, key, indented JSON with contact data masked', async () => {
      const query = new DeadLetterListQuery(db.database);
      const [letter] = (await query.list({ reason: 'mapping_failed' }, '')).letters;
      const message = await query.message(letter?.id ?? '');
      expect(message).not.toBeNull();
      expect(message?.key).toBe('ORD-B');
      expect(message?.headers.map((header) => header.name)).toEqual(
        expect.arrayContaining(['traceparent', 'x-dlq-reason', 'x-dlq-original-offset']),
      );
      expect(message?.body.json).toContain('\n  "type": "order.payment_requested"');
      expect(message?.body.json).toContain('k•••@example.com');
      expect(message?.body.json).toContain('••••••67');
      expect(message?.body.json).not.toContain('kari.nordmann');
      expect(message?.body.json).not.toContain('91234567');
      expect(message?.body.text).not.toContain('kari.nordmann');
      // Every personal field, by key and in free text (personal-data-mask.ts).
      for (const personal of [
        'Nordmann',
        'Storgata',
        'Oslo',
        'EL 12345',
        'WVWZZZE2ZPE012345',
        '412 34 567',
        'kari@example.no',
      ]) {
        expect(message?.body.json).not.toContain(personal);
        expect(message?.body.text).not.toContain(personal);
      }
      expect(message).toMatchObject({
        hasContact: true,
        contactRevealed: false,
        personalData: ['name', 'address', 'email', 'phone', 'vin', 'number_plate'],
      });

      const revealed = await query.message(letter?.id ?? '', true);
      expect(revealed?.body.json).toContain('kari.nordmann@example.com');
      expect(revealed?.body.json).toContain('91234567');
      expect(revealed?.body.json).toContain('WVWZZZE2ZPE012345');
      expect(revealed?.contactRevealed).toBe(true);
    });

    it('shows a body that is not JSON as text, and no letter for an unknown id', async () => {
      const query = new DeadLetterListQuery(db.database);
      const [letter] = (await query.list({ reason: 'invalid_json' }, '')).letters;
      const message = await query.message(letter?.id ?? '');
      expect(message?.body).toEqual({ bytes: 5, text: '{oops', json: null, base64: null });
      expect(message?.key).toBeNull();
      expect(await query.message('999999')).toBeNull();
      expect(await query.message('1; DROP TABLE dead_letters')).toBeNull();
    });

    it('names the orders a replay of a filter would take, oldest failure first', async () => {
      const query = new DeadLetterListQuery(db.database);
      expect(await query.waitingOrders({}, 10)).toEqual(['ORD-A', 'ORD-B']);
      expect(await query.waitingOrders({ organizationId: 'org-b' }, 10)).toEqual(['ORD-B']);
      expect(await query.waitingOrders({ reason: 'rejected_by_payflow' }, 10)).toEqual(['ORD-A']);
      expect(await query.waitingOrders({ from: hoursAgo(1.5) }, 10)).toEqual([]);
    });
  });

  describe('settlement nights', () => {
    beforeAll(async () => {
      const sql = db.database.sql;
      await insertNight(sql, { org: 'org-a', date: '2026-11-20', status: 'pulled', version: 1 });
      await insertNight(sql, { org: 'org-a', date: '2026-11-21', status: 'pulled', version: 2 });
      await insertNight(sql, {
        org: 'org-a',
        date: '2026-11-22',
        status: 'missing',
        error: 'Payflow answered 503 (mail ops@example.com)',
      });
      await insertNight(sql, { org: 'org-b', date: '2026-11-21', status: 'forgotten' });
      await insertNight(sql, { org: 'org-b', date: '2026-10-01', status: 'missing' });
    });

    it('groups the nights of a range by organization: pulled, changed, missing, forgotten', async () => {
      const query = new SettlementNightsQuery(db.database);
      const groups = await query.byOrganization({
        from: '2026-11-01',
        to: '2026-11-30',
        organizationId: null,
      });
      expect(groups.map((group) => group.organizationId)).toEqual(['org-a', 'org-b']);
      const [a, b] = groups;
      expect(a?.nights.map((night) => [night.date, night.state])).toEqual([
        ['2026-11-22', 'missing'],
        ['2026-11-21', 'changed'],
        ['2026-11-20', 'pulled'],
      ]);
      expect(a?.counts).toEqual({ pulled: 1, changed: 1, missing: 1, forgotten: 0 });
      expect(a?.nights[0]?.lastError).toBe('Payflow answered 503 (mail [email])');
      expect(a?.nights[1]).toMatchObject({ version: 2, rows: 7, badRows: 1 });
      expect(b?.nights.map((night) => night.state)).toEqual(['forgotten']);

      const onlyB = await query.byOrganization({
        from: '2026-09-01',
        to: '2026-11-30',
        organizationId: 'org-b',
      });
      expect(onlyB.map((group) => group.counts)).toEqual([
        { pulled: 0, changed: 0, missing: 1, forgotten: 1 },
      ]);
    });
  });

  describe('overview', () => {
    it('counts per hour what the tables date, and samples the live gauges', async () => {
      const registry = new Registry();
      const lag = new Gauge({
        name: 'payflow_bridge_order_events_partition_lag',
        help: 'lag',
        labelNames: ['topic', 'partition'],
        registers: [registry],
      });
      const webhooks = new Counter({
        name: 'payflow_bridge_webhooks_received_total',
        help: 'webhooks',
        labelNames: ['kind', 'outcome'],
        registers: [registry],
      });
      lag.set({ topic: 'erp.orders.v1', partition: '0' }, 4);
      lag.set({ topic: 'erp.orders.v1', partition: '1' }, 3);
      webhooks.inc({ kind: 'payment-update', outcome: 'unauthorized' }, 2);
      webhooks.inc({ kind: 'payment-update', outcome: 'accepted' }, 9);

      const sql = db.database.sql;
      await sql.execute(
        `INSERT INTO webhook_inbox (payment_id, kind, dedupe_key, body, verdict, received_at)
         SELECT gen_random_uuid(), 'status-update', 'k' || i, '\\x7b7d', 'accepted',
                now() - make_interval(hours => i % 3)
           FROM generate_series(1, 6) AS i`,
      );
      await sql.execute(
        `INSERT INTO outbox (bucket, topic, key, value) VALUES (0, 'payflow.payment-status.v1', 'k', '\\x00')`,
      );

      const sampler = new OverviewSampler(db.database, registry, { capacity: 10 });
      await sampler.sample(new Date(Date.now() - 120_000));
      webhooks.inc({ kind: 'payment-update', outcome: 'rejected' }, 3);
      lag.set({ topic: 'erp.orders.v1', partition: '1' }, 0);
      const overview = await new OverviewQuery(db.database, sampler).overview();

      expect(overview.consumerLag.value).toBe(4);
      expect(overview.consumerLag.series.points.map((point) => point.value)).toEqual([7, 4]);
      expect(overview.outboxBacklog.value).toBe(1);
      expect(overview.inDoubt.value).toBe(0);
      expect(overview.webhooks.refused).toBe(3);
      expect(overview.webhooks.received24h).toBe(6);
      expect(overview.webhooks.receivedSeries.points).toHaveLength(24);
      expect(overview.webhooks.receivedSeries.points.slice(-3).map((point) => point.value)).toEqual(
        [2, 2, 2],
      );
      // Letters of the last 24 h: 5 h, 3 h, 2 h and 1 h ago (not the one 30 h ago).
      expect(overview.deadLetters.last24h).toBe(4);
      expect(overview.settlements.lastPulled?.state).toMatch(/pulled|changed/);
      expect(overview.sampledSince).not.toBeNull();
    });

    it('fills the hours without any with zeros, oldest first', () => {
      const now = new Date('2026-11-27T10:30:00Z');
      const series = hourlySeries([{ hour: new Date('2026-11-27T09:00:00Z'), count: 5 }], now, 3);
      expect(series.points).toEqual([
        { at: '2026-11-27T08:00:00.000Z', value: 0 },
        { at: '2026-11-27T09:00:00.000Z', value: 5 },
        { at: '2026-11-27T10:00:00.000Z', value: 0 },
      ]);
    });
  });
});
