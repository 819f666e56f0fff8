/**
 * The controls that produce each reconciliation finding on purpose (docs/assumptions.md,
 * settlement controls): POST /sandbox/payments/{id}/settlement makes a payment's next
 * line(s) carry another gross, settle twice on two nights, never, or N days late, and a
 * refund line differ from the refund; POST /sandbox/settlements books a line for a payment
 * that does not exist.
 */
import { describe, expect, it } from '@jest/globals';
import type { SandboxHandle } from '../support/sandbox.js';
import { call, control, createPayment, type ValidationBody } from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';
import { addDays, amounts, sandboxToday, settlementRows } from './settlement-rows.js';

describe('sandbox settlement controls', () => {
  let sandbox: SandboxHandle;
  let token: string;
  let today: string;

  useTestSandbox({
    options: { settlement: { latePercent: 0 } },
    started: (started) => {
      sandbox = started;
    },
    token: (fresh) => {
      token = fresh;
    },
  });

  const settle = (id: string, body: unknown) =>
    control<Record<string, unknown>>(sandbox, 'POST', `/payments/${id}/settlement`, body);
  const created = async (): Promise<string> => {
    const payment = await createPayment(sandbox, token);
    return payment.id;
  };
  const pay = (id: string) =>
    control(sandbox, 'POST', `/payments/${id}/simulate`, { action: 'paid' });
  /** Every row of the payment from today to 5 days on. */
  const rowsOf = async (id: string) => {
    today = await sandboxToday(sandbox);
    return (await settlementRows(sandbox, today, addDays(today, 5))).filter(
      (row) => row.payment_id === id,
    );
  };

  it('amount_mismatch: the next line carries another gross (its fee follows it)', async () => {
    const id = await created();
    const answer = await settle(id, { grossAmount: '1200.00' });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({
      paymentId: id,
      kind: 'payment',
      count: 1,
      grossAmount: '1200.00',
      twice: false,
      never: false,
      lateDays: null,
    });
    await pay(id);
    const rows = await rowsOf(id);
    // 1.4 % of 1200.00 = 16.80, + 1.00
    expect(rows.map((row) => [row.settlement_date, ...amounts(row)])).toEqual([
      [today, '1200.00', '17.80', '1182.20'],
    ]);
  });

  it('settled_twice: booked on the night of collection and again the night after', async () => {
    const id = await created();
    expect((await settle(id, { twice: true })).status).toBe(201);
    await pay(id);
    const rows = await rowsOf(id);
    expect(rows.map((row) => [row.settlement_date, row.gross_amount])).toEqual([
      [today, '1249.50'],
      [addDays(today, 1), '1249.50'],
    ]);
    expect(rows[0]?.settlement_id).not.toBe(rows[1]?.settlement_id);
    expect(rows[1]?.payment_number).toBe(rows[0]?.payment_number);
  });

  it('not_settled: the line is never booked; later lines of the payment are', async () => {
    const id = await created();
    expect((await settle(id, { never: true })).status).toBe(201);
    await pay(id);
    expect(await rowsOf(id)).toEqual([]);
    // the control was used up: a refund of the payment settles as usual
    await call('POST', `${sandbox.url}/api/refund`, {
      token,
      body: { crossPayment: id, currency: 'NOK', totalGrossAmount: 10, totalNetAmount: 8 },
    });
    expect((await rowsOf(id)).map((row) => row.gross_amount)).toEqual(['-10.00']);
  });

  it('settles late by N days, and applies to `count` lines of an installment payment', async () => {
    today = await sandboxToday(sandbox);
    const late = await created();
    await settle(late, { lateDays: 3 });
    await pay(late);
    const [row] = await rowsOf(late);
    expect(row?.settlement_date).toBe(addDays(today, 3));
    expect(row?.booked_at.slice(0, 10)).toBe(addDays(today, 3));

    const plan = await createPayment(sandbox, token, {
      total: 300,
      net: 240,
      installments: [
        { date: addDays(today, 10), grossAmount: 100 },
        { date: addDays(today, 11), grossAmount: 100 },
        { date: addDays(today, 12), grossAmount: 100 },
      ],
    });
    await settle(plan.id, { lateDays: 2, count: 2 });
    await pay(plan.id); // the payer pays all three today
    const lines = await rowsOf(plan.id);
    expect(lines.map((line) => [line.settlement_date, line.installment_id])).toEqual([
      [today, plan.installments?.[2]?.id],
      [addDays(today, 2), plan.installments?.[0]?.id],
      [addDays(today, 2), plan.installments?.[1]?.id],
    ]);
  });

  it('refund_mismatch: the next refund line differs from the refund made', async () => {
    const id = await created();
    await pay(id);
    const answer = await settle(id, { kind: 'refund', grossAmount: -90 });
    expect(answer.body).toMatchObject({ kind: 'refund', grossAmount: '-90.00' });
    const refund = await call<{ grossRefundedAmount: number }>(
      'POST',
      `${sandbox.url}/api/refund`,
      {
        token,
        body: { crossPayment: id, currency: 'NOK', totalGrossAmount: 100.1, totalNetAmount: 80 },
      },
    );
    expect(refund.status).toBe(200);
    expect(refund.body.grossRefundedAmount).toBe(100.1);
    const rows = await rowsOf(id);
    expect(rows.map((row) => [row.transaction_type, ...amounts(row)])).toEqual([
      ['payment', '1249.50', '18.49', '1231.01'],
      ['refund', '-90.00', '-1.26', '-88.74'],
    ]);
  });

  it('unknown_payment: POST /sandbox/settlements books a line for an id never issued', async () => {
    const unknown = 'ffffffffffffffffffffffff';
    expect((await control(sandbox, 'GET', `/payments/${unknown}`)).status).toBe(404);
    today = await sandboxToday(sandbox);
    const seeded = await control(sandbox, 'POST', '/settlements', {
      date: today,
      movements: [{ paymentId: unknown, grossAmount: '500.00', feeMethod: 'card' }],
    });
    expect(seeded.status).toBe(201);
    const [row] = await rowsOf(unknown);
    expect([row?.transaction_type, ...amounts(row)]).toEqual([
      'payment',
      '500.00',
      '8.00',
      '492.00',
    ]);
    expect(row?.order_number).toBe(`SB-${row?.payment_number}`);
  });

  it('replaces a control with the next one, and drops it with DELETE', async () => {
    const id = await created();
    await settle(id, { never: true });
    await settle(id, { grossAmount: 1 });
    expect((await control(sandbox, 'DELETE', `/payments/${id}/settlement`)).body).toEqual({
      removed: 1,
    });
    expect((await control(sandbox, 'DELETE', `/payments/${id}/settlement`)).body).toEqual({
      removed: 0,
    });
    await pay(id);
    expect((await rowsOf(id)).map((row) => row.gross_amount)).toEqual(['1249.50']);
  });

  it('answers 422 to a body it cannot follow, 404 to a payment it does not have', async () => {
    const id = await created();
    const cases: [unknown, (string | number)[], string][] = [
      [{}, ['body'], 'value_error'],
      [{ never: true, twice: true }, ['body', 'twice'], 'value_error'],
      [{ never: true, grossAmount: 5 }, ['body', 'grossAmount'], 'value_error'],
      [{ grossAmount: '1.005' }, ['body', 'grossAmount'], 'value_error.amount'],
      [{ grossAmount: 'ten' }, ['body', 'grossAmount'], ''],
      [{ grossAmount: -5 }, ['body', 'grossAmount'], 'value_error.amount_sign'],
      [{ kind: 'refund', grossAmount: 5 }, ['body', 'grossAmount'], 'value_error.amount_sign'],
      [{ kind: 'chargeback', never: true }, ['body', 'kind'], ''],
      [{ lateDays: -1 }, ['body', 'lateDays'], ''],
      [{ lateDays: 1.5 }, ['body', 'lateDays'], ''],
      [{ lateDays: 367 }, ['body', 'lateDays'], ''],
      [{ twice: 'yes' }, ['body', 'twice'], ''],
      [{ never: true, count: 0 }, ['body', 'count'], ''],
    ];
    for (const [body, loc, type] of cases) {
      const answer = await control<ValidationBody>(
        sandbox,
        'POST',
        `/payments/${id}/settlement`,
        body,
      );
      expect([JSON.stringify(body), answer.status]).toEqual([JSON.stringify(body), 422]);
      expect(answer.body.detail[0]?.loc).toEqual(loc);
      if (type !== '') expect(answer.body.detail[0]?.type).toContain(type);
    }
    expect((await settle('000000000000000000000abc', { never: true })).status).toBe(404);
    // nothing was set by the refused bodies
    await pay(id);
    expect((await rowsOf(id)).map((row) => row.gross_amount)).toEqual(['1249.50']);
  });
});
