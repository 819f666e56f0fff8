/**
 * The console's search (OrderSearchQuery) against a real, migrated database filled with
 * 20 000 orders: each way of finding an order, the last failures, and the plans of every
 * statement it runs, which must read the big tables by index, never by a sequential scan
 * (the million-order timing is bench/console-search.bench.ts).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Sql } from '../../src/database/database.js';
import { OrderRepository } from '../../src/orders/order.repository.js';
import { NEW_PAYMENTS, PaymentRepository } from '../../src/payments/payment.repository.js';
import { OrderSearchQuery } from '../../src/operator/search/order-search.query.js';
import { customersOf, fillOrders, idsOf } from '../../bench/console-search/fill.js';
import { openDatabase, type OpenDatabase } from '../outbox/outbox-test-kit.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const COUNT = 20_000;
const BIG_TABLES = ['orders', 'payments', 'processed_events', 'command_attempts', 'dead_letters'];

/** An Sql that remembers every statement it ran, to EXPLAIN them afterwards. */
function recording(sql: Sql): { sql: Sql; statements: { text: string; params: unknown[] }[] } {
  const statements: { text: string; params: unknown[] }[] = [];
  return {
    statements,
    sql: {
      query: (text, params = []) => {
        statements.push({ text, params: [...params] });
        return sql.query(text, params);
      },
      execute: (text, params = []) => {
        statements.push({ text, params: [...params] });
        return sql.execute(text, params);
      },
    },
  };
}

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

async function planOf(sql: Sql, text: string, params: unknown[]): Promise<PlanNode[]> {
  const [row] = await sql.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    `EXPLAIN (FORMAT JSON) ${text}`,
    params,
  );
  const plan = row?.['QUERY PLAN'][0]?.Plan;
  if (plan === undefined) throw new Error('no plan');
  return nodes(plan);
}

describe('OrderSearchQuery', () => {
  let testDb: TestDatabase;
  let db: OpenDatabase;
  let ids: Awaited<ReturnType<typeof idsOf>>;
  const customers = customersOf({ count: COUNT });

  beforeAll(async () => {
    testDb = await createTestDatabase('order_search');
    db = await openDatabase(testDb.url, 4);
    await fillOrders(db.database.sql, { count: COUNT, chunk: 10_000 });
    ids = await idsOf(db.database.sql, 1234, customers);
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  /** The query on a recording connection, and the plans of what it ran. */
  async function run<T>(
    work: (query: OrderSearchQuery) => Promise<T>,
  ): Promise<{ result: T; plans: PlanNode[][] }> {
    const recorder = recording(db.database.sql);
    const result = await work(new OrderSearchQuery({ sql: recorder.sql }));
    const plans: PlanNode[][] = [];
    for (const statement of recorder.statements) {
      plans.push(await planOf(db.database.sql, statement.text, statement.params));
    }
    return { result, plans };
  }

  function expectIndexesOnly(plans: PlanNode[][]): void {
    expect(plans.length).toBeGreaterThan(0);
    const all = plans.flat();
    const seqScans = all
      .filter((node) => node['Node Type'] === 'Seq Scan')
      .map((node) => node['Relation Name']);
    expect(seqScans.filter((table) => BIG_TABLES.includes(table ?? ''))).toEqual([]);
    expect(all.some((node) => node['Index Name'] !== undefined)).toBe(true);
  }

  it('finds an order by its id, with its payment, last event and flags', async () => {
    const { result, plans } = await run((query) => query.find(ids.orderId, 20));
    expect(result).toHaveLength(1);
    const [hit] = result;
    expect(hit).toMatchObject({
      orderId: ids.orderId,
      orderNumber: 'SO-1234',
      organizationId: 'org-34',
      customerNumber: ids.customerNumber,
      state: 'open',
      matchedBy: ['order_id'],
      blocked: false,
      failed: false,
      failure: null,
    });
    expect(hit?.payments).toEqual([
      expect.objectContaining({ payflowId: ids.payflowId, state: 'created', status: 'pending' }),
    ]);
    expect(hit?.payments[0]?.total).toEqual({ amount: '1012.34', currency: 'NOK' });
    expect(hit?.lastEventAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expectIndexesOnly(plans);
    const indexes = plans.flat().map((node) => node['Index Name']);
    expect(indexes).toEqual(expect.arrayContaining(['orders_pkey', 'processed_events_order_idx']));
  });

  it('finds an order by its order number, trimmed', async () => {
    const { result, plans } = await run((query) => query.find('  SO-1234 ', 20));
    expect(result.map((hit) => [hit.orderId, hit.matchedBy])).toEqual([
      [ids.orderId, ['order_number']],
    ]);
    expectIndexesOnly(plans);
    expect(plans.flat().map((node) => node['Index Name'])).toContain('orders_order_number_idx');
  });

  it('finds an order by its Payflow payment id', async () => {
    const { result, plans } = await run((query) => query.find(ids.payflowId, 20));
    expect(result.map((hit) => [hit.orderId, hit.matchedBy])).toEqual([
      [ids.orderId, ['payflow_id']],
    ]);
    expectIndexesOnly(plans);
    expect(plans.flat().map((node) => node['Index Name'])).toContain('payments_payflow_id_key');
  });

  it("finds a customer's orders by customer number, newest first, at most `limit`", async () => {
    const { result, plans } = await run((query) => query.find(ids.customerNumber, 20));
    // Orders i ≡ 1234 (mod customers): 1234, 1234 + customers, …; order 1 is the newest.
    const expected = [0, 1, 2, 3, 4].map((k) => `SO-${1234 + k * customers}`);
    expect(result.map((hit) => hit.orderNumber)).toEqual(expected);
    expect(result.every((hit) => hit.matchedBy.join() === 'customer_number')).toBe(true);
    expectIndexesOnly(plans);
    expect(plans.flat().map((node) => node['Index Name'])).toContain('orders_customer_number_idx');

    const two = await new OrderSearchQuery(db.database).find(ids.customerNumber, 2);
    expect(two.map((hit) => hit.orderNumber)).toEqual(expected.slice(0, 2));
  });

  it('finds nothing for an unknown or empty term, and reads nothing for an empty one', async () => {
    expect(await new OrderSearchQuery(db.database).find('SO-none', 20)).toEqual([]);
    const { result, plans } = await run((query) => query.find('   ', 20));
    expect(result).toEqual([]);
    expect(plans).toEqual([]);
  });

  it('lists the last failures newest first: blocked, creation failed, in doubt', async () => {
    const { result, plans } = await run((query) => query.recentFailures(10));
    expect(result).toHaveLength(10);
    // Order i failed i seconds ago: the smallest failing i come first.
    const failing = Array.from({ length: COUNT }, (_, k) => k + 1).filter(
      (i) => i % 1000 === 0 || i % 997 === 0 || i % 1999 === 0,
    );
    expect(result.map((hit) => hit.orderNumber)).toEqual(
      failing.slice(0, 10).map((i) => `SO-${i}`),
    );
    expect(result.every((hit) => hit.failed)).toBe(true);
    const byNumber = new Map(result.map((hit) => [hit.orderNumber, hit]));
    expect(byNumber.get('SO-997')?.failure?.kind).toBe('creation_failed');
    expect(byNumber.get('SO-1000')).toMatchObject({ blocked: true });
    expect(byNumber.get('SO-1000')?.failure).toMatchObject({
      kind: 'dead_lettered',
      detail: expect.stringContaining('rejected_by_payflow'),
    });
    expect(byNumber.get('SO-1999')?.failure?.kind).toBe('in_doubt');
    expectIndexesOnly(plans);
    expect(plans.flat().map((node) => node['Index Name'])).toEqual(
      expect.arrayContaining([
        'orders_blocked_idx',
        'payments_failed_idx',
        'command_attempts_in_doubt_idx',
      ]),
    );
    // The attempts in doubt are read up to the limit, not all of them.
    const inDoubtPlan = plans.find((plan) =>
      plan.some((node) => node['Index Name'] === 'command_attempts_in_doubt_idx'),
    );
    expect(inDoubtPlan?.map((node) => node['Node Type'])).toContain('Limit');
  });

  it('keeps the customer number of a payment request on its order, where search finds it', async () => {
    const orders = new OrderRepository();
    const payments = new PaymentRepository();
    const orderId = `order-${randomUUID()}`;
    const customerNumber = `CUST-${randomUUID().slice(0, 8)}`;
    await db.database.transaction((tx) =>
      payments.create(
        tx,
        [
          {
            n: 1,
            id: randomUUID(),
            eventId: randomUUID(),
            orderId,
            organizationId: 'org-1',
            orderNumber: 'SO-CUSTOMER',
            customerNumber,
            currency: 'NOK',
            totalGrossMinor: 10_000,
            totalNetMinor: 8_000,
            webhookToken: randomUUID(),
            apiKeyHash: Buffer.alloc(32, 1),
            paymentMethodId: null,
            paymentRef: null,
            externalRef: null,
            traceHeaders: null,
          },
        ],
        false,
        [orders.upsertForNewPayments(NEW_PAYMENTS)],
      ),
    );
    const hits = await new OrderSearchQuery(db.database).find(customerNumber, 20);
    expect(hits.map((hit) => [hit.orderId, hit.customerNumber, hit.matchedBy])).toEqual([
      [orderId, customerNumber, ['customer_number']],
    ]);
    expect(hits[0]?.payments[0]).toMatchObject({ state: 'creating', payflowId: null });
  });
});
