/**
 * `privacy export`, `privacy erase` and the replay refusal as operators run them: the
 * compiled CLI (`node bin/payflow-bridge.js …`) against a test database, with no Payflow,
 * webhook or Kafka variable set (the three read and write Postgres only; a refused replay
 * stops before it reaches Kafka).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  buildCli,
  hoursAgo,
  insertDeadLetter,
  insertOrder,
  runBinary,
} from '../cli/cli-test-kit.js';
import type { BinaryResult } from '../cli/cli-test-kit.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { openDatabase, type OpenDatabase } from '../outbox/outbox-test-kit.js';

const EMAIL = 'kari.nordmann@example.no';
const VIN = 'YV1ABCDEF12345678';

describe('privacy commands (compiled)', () => {
  let testDb: TestDatabase;
  let db: OpenDatabase;

  const run = (args: string[]): Promise<BinaryResult> =>
    runBinary(args, { DATABASE_URL: testDb.url });

  beforeAll(async () => {
    [testDb] = await Promise.all([createTestDatabase('privacy_cli'), buildCli()]);
    db = await openDatabase(testDb.url, 2);
    const sql = db.database.sql;
    await insertOrder(sql, 'SO-P1', { blocked: true });
    await sql.execute(`UPDATE orders SET customer_number = 'C-7' WHERE order_id = 'SO-P1'`);
    await insertDeadLetter(sql, {
      orderId: 'SO-P1',
      reason: 'rejected_by_payflow',
      failedAt: hoursAgo(2),
      eventType: 'order.payment_requested',
      error: `Payflow 422: ${EMAIL} refused`,
      value: JSON.stringify({
        eventId: '3f1c1a52-8b0e-4c59-9a55-2d4f0b1e7a10',
        type: 'order.payment_requested',
        orderId: 'SO-P1',
        data: {
          currency: 'NOK',
          customer: { email: EMAIL, customerNumber: 'C-7' },
          vehicles: [{ role: 'new', vin: VIN }],
        },
      }),
    });
  }, 180_000);

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it('exports the customer’s data as JSON', async () => {
    const result = await run(['privacy', 'export', '--customer-number', 'C-7']);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const exported = JSON.parse(result.out) as { orders: { orderId: string }[] };
    expect(exported.orders.map((order) => order.orderId)).toEqual(['SO-P1']);
    expect(result.out).toContain(EMAIL);
    expect(result.out).toContain(VIN);
  });

  it('erases it, records who did, and says so again without changing anything', async () => {
    const first = await run(['privacy', 'erase', '--order', 'SO-P1', '--by', 'Data Officer']);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(
      /^Erased the personal data of order SO-P1 \(1 order\(s\): SO-P1\): 2 row\(s\) changed \(deadLetters 1, customerNumbers 1\)\.\nRecorded as erasure #1\./,
    );
    const exported = await run(['privacy', 'export', '--order', 'SO-P1']);
    expect(exported.out).not.toContain(EMAIL);
    expect(exported.out).not.toContain(VIN);

    const second = await run(['privacy', 'erase', '--order', 'SO-P1']);
    expect(second.code).toBe(0);
    expect(second.out).toMatch(
      /^Nothing changed: no personal data is left to erase for order SO-P1 \(1 order\(s\): SO-P1\)\.\nErased before: erasure #1 at \S+ by Data Officer\.\n$/,
    );
  });

  it('refuses to replay the erased dead letters, in one line', async () => {
    const result = await run(['dlq', 'replay', '--order', 'SO-P1']);
    expect(result.code).toBe(1);
    expect(result.out).toBe('');
    expect(result.err.trim().split('\n')).toHaveLength(1);
    expect(result.err).toMatch(
      /order SO-P1 is not replayed: the personal data of dead letter #\d+ was erased/,
    );
  });

  it('asks for exactly one of --order and --customer-number', async () => {
    const neither = await run(['privacy', 'erase']);
    expect(neither.code).toBe(2);
    expect(neither.err).toContain('give exactly one of --order ID or --customer-number N');
    const both = await run(['privacy', 'export', '--order', 'SO-P1', '--customer-number', 'C-7']);
    expect(both.code).toBe(2);
  });
});
