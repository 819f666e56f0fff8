/**
 * `order show` (OrderShowQuery and its rendering) against a real, migrated database.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OrderShowQuery } from '../../src/operator/order-show/order-show.query.js';
import { renderOrderView } from '../../src/operator/order-show/order-show.view.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { openDatabase, type OpenDatabase } from '../outbox/outbox-test-kit.js';
import { SECRETS, hoursAgo, insertDeadLetter, seedOrderWithPayments } from './cli-test-kit.js';

function expectNoSecrets(text: string): void {
  for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
  expect(text).not.toContain(Buffer.from(SECRETS.apiKey).toString('hex'));
  expect(text).not.toContain('kari');
  expect(text).not.toMatch(/912 34 567/);
}

describe('order show', () => {
  let testDb: TestDatabase;
  let db: OpenDatabase;
  const query = new OrderShowQuery();

  beforeAll(async () => {
    testDb = await createTestDatabase('order_show');
    db = await openDatabase(testDb.url, 2);
    await seedOrderWithPayments(db.database.sql, 'SO-10042');
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it('prints the order, its payments with everything hanging off them, and its dead letters', async () => {
    const view = await query.show(db.database.sql, 'SO-10042');
    expect(view).not.toBeNull();
    const text = renderOrderView(view!);

    expect(text).toMatch(/^Order SO-10042\n/);
    expect(text).toMatch(/state\s+open/);
    expect(text).toMatch(/blocked\s+yes, since \d{4}-\d\d-\d\dT/);
    expect(text).toContain('Payments (2)');
    expect(text).toMatch(/Payment [0-9a-f-]{36} \(latest\)/);
    expect(text).toMatch(/Payflow id\s+bbbbbbbbbbbbbbbbbbbbbbb2/);
    expect(text).toMatch(/provider status\s+INITIATED \(pending\)/);
    expect(text).toMatch(/total gross\s+1249\.50 NOK/);
    expect(text).toMatch(/total net\s+999\.60 NOK/);
    expect(text).toMatch(
      /link\s+https:\/\/pay\.example\.test\/p\/bbbbbbbbbbbbbbbbbbbbbbb2\?api_key=\[redacted\]/,
    );
    expect(text).toContain('    Installments');
    expect(text).toMatch(
      /1\s+INST-1\s+ccccccccccccccccccccccc1\s+initial\s+2026-12-01\s+624\.75 NOK\s+PAID/,
    );
    expect(text).toMatch(/2\s+INST-2\s+.*2027-01-01\s+624\.75 NOK\s+CREATED/);
    expect(text).toContain('    Documents');
    expect(text).toMatch(/DOC-1\s+invoice-10042\.pdf\s+application\/pdf\s+48213/);
    expect(text).toContain('    Refunds');
    expect(text).toMatch(
      /RF-1\s+eeeeeeeeeeeeeeeeeeeeeee1\s+partial\s+100\.00 NOK\s+80\.00 NOK\s+1149\.50 NOK/,
    );
    expect(text).toContain('    Status history');
    expect(text).toMatch(/create\s+-\s+DRAFT\s+pending/);
    expect(text).toMatch(/webhook\s+DRAFT\s+OPENED\s+pending/);
    expect(text).toMatch(/poll\s+OPENED\s+INITIATED\s+pending/);
    expect(text).toMatch(/total gross\s+500\.00 NOK/);
    expect(text).toContain('Dead letters (2, 1 not replayed)');
    expect(text).toMatch(/order\.refund_requested\s+rejected_by_payflow\s+1\s+\d{4}-/);
    expect(text).toMatch(
      /order\.installment_added\s+blocked_by_earlier_failure\s+1\s+no\s+blocked;/,
    );
    expect(text).toContain('[email]');
    expect(text).toContain('[phone]');
    expectNoSecrets(text);
  });

  it('gives machine-readable JSON with the same content and no secrets', async () => {
    const view = await query.show(db.database.sql, 'SO-10042');
    const json = JSON.stringify(view);
    expectNoSecrets(json);
    expect(json).not.toMatch(/webhook_?token|api_?key_?hash/i);
    const parsed = JSON.parse(json) as {
      order: { orderId: string; blocked: boolean };
      payments: {
        latest: boolean;
        totalGross: { amount: string; currency: string };
        installments: unknown[];
      }[];
      deadLetters: { reason: string; replayed: boolean }[];
    };
    expect(parsed.order).toMatchObject({ orderId: 'SO-10042', blocked: true });
    expect(parsed.payments.map((p) => [p.latest, p.totalGross])).toEqual([
      [false, { amount: '500.00', currency: 'NOK' }],
      [true, { amount: '1249.50', currency: 'NOK' }],
    ]);
    expect(parsed.payments[1]?.installments).toHaveLength(2);
    expect(parsed.deadLetters.map((d) => [d.reason, d.replayed])).toEqual([
      ['rejected_by_payflow', true],
      ['blocked_by_earlier_failure', false],
    ]);
  });

  it('knows an order only from its dead letters, and nothing of an unknown id', async () => {
    await insertDeadLetter(db.database.sql, {
      orderId: 'SO-GHOST',
      reason: 'invalid_event',
      failedAt: hoursAgo(2),
    });
    const ghost = await query.show(db.database.sql, 'SO-GHOST');
    expect(ghost?.order).toMatchObject({ orderId: 'SO-GHOST', state: 'unknown', blocked: false });
    expect(renderOrderView(ghost!)).toContain('Payments (0)\n  none');
    expect(await query.show(db.database.sql, 'SO-NOPE')).toBeNull();
  });
});
