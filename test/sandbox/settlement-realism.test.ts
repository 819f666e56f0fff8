/**
 * The sandbox settles like an acquirer (docs/assumptions.md, settlement fees and timing):
 * a fee by payment method, refunds negative, one line per installment debit, and a seeded
 * share of lines booked a night late (0 here unless a test asks for more).
 */
import { describe, expect, it } from '@jest/globals';
import type { SandboxHandle } from '../support/sandbox.js';
import { call, control, createPayment } from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';
import { addDays, amounts, sandboxToday, settlementRows } from './settlement-rows.js';

const TERMINAL = '000000000000000000000001';
const INVOICE = '000000000000000000000002';

describe('sandbox settlement: fees, installments, refunds, late nights', () => {
  let sandbox: SandboxHandle;
  let token: string;

  useTestSandbox({
    options: { settlement: { latePercent: 0 } },
    started: (started) => {
      sandbox = started;
    },
    token: (fresh) => {
      token = fresh;
    },
  });

  const simulate = (id: string, action: string, installmentId?: string) =>
    control(sandbox, 'POST', `/payments/${id}/simulate`, { action, installmentId });
  const refund = (id: string, gross: number) =>
    call('POST', `${sandbox.url}/api/refund`, {
      token,
      body: { crossPayment: id, currency: 'NOK', totalGrossAmount: gross, totalNetAmount: 0 },
    });

  it('takes the card fee of a link or terminal payment and the invoice fee of an invoice', async () => {
    const link = await createPayment(sandbox, token);
    const terminal = await createPayment(sandbox, token, { paymentMethodId: TERMINAL });
    const invoice = await createPayment(sandbox, token, { paymentMethodId: INVOICE });
    for (const payment of [link, terminal, invoice]) await simulate(payment.id, 'paid');
    const today = await sandboxToday(sandbox);
    const rows = await settlementRows(sandbox, today);
    expect(rows.map((row) => [row.payment_id, row.settlement_date, ...amounts(row)])).toEqual([
      // 1.4 % of 1249.50 = 17.493 → 17.49, + 1.00
      [link.id, today, '1249.50', '18.49', '1231.01'],
      [terminal.id, today, '1249.50', '18.49', '1231.01'],
      // 2.5 % of 1249.50 = 31.2375 → 31.24
      [invoice.id, today, '1249.50', '31.24', '1218.26'],
    ]);
    expect(
      rows.every((row) => row.transaction_type === 'payment' && row.installment_id === ''),
    ).toBe(true);
  });

  it('books a refund negative, giving back the rate part of the fee', async () => {
    const payment = await createPayment(sandbox, token);
    await simulate(payment.id, 'paid');
    expect((await refund(payment.id, 100.1)).status).toBe(200);
    expect((await refund(payment.id, 0.35)).status).toBe(200);
    const rows = await settlementRows(sandbox, await sandboxToday(sandbox));
    expect(rows.map((row) => [row.transaction_type, ...amounts(row)])).toEqual([
      ['payment', '1249.50', '18.49', '1231.01'],
      ['refund', '-100.10', '-1.40', '-98.70'], // 1.4014 → 1.40
      ['refund', '-0.35', '0.00', '-0.35'], // 0.0049 → 0.00
    ]);
  });

  it('settles an installment payment one line per debit, each with its installment id', async () => {
    const today = await sandboxToday(sandbox);
    const payment = await createPayment(sandbox, token, {
      total: 1050.55,
      net: 840.44,
      installments: [
        { date: today, grossAmount: 400 },
        { date: addDays(today, 1), grossAmount: 300 },
        { date: addDays(today, 2), grossAmount: 350.55 },
      ],
    });
    const [initial, second, third] = payment.installments ?? [];
    await simulate(payment.id, 'installment_paid', initial?.id);
    // the scheduled ones are debited at 00:00 UTC of their dates
    await control(sandbox, 'POST', '/clock/advance', { minutes: 3 * 24 * 60 });
    const rows = await settlementRows(sandbox, today, addDays(today, 3));
    expect(rows.map((row) => [row.settlement_date, row.installment_id, ...amounts(row)])).toEqual([
      // paid by the payer: installment 2.9 % (11.60); debited: direct debit 2.00
      [today, initial?.id, '400.00', '11.60', '388.40'],
      [addDays(today, 1), second?.id, '300.00', '2.00', '298.00'],
      [addDays(today, 2), third?.id, '350.55', '2.00', '348.55'],
    ]);
    expect(new Set(rows.map((row) => row.payment_id))).toEqual(new Set([payment.id]));
    expect(rows.every((row) => row.transaction_type === 'payment')).toBe(true);
    expect(rows[1]?.booked_at).toBe(`${addDays(today, 1)}T00:00:00.000Z`);
    // the payment's number on every line (the first payment since the reset)
    expect(rows.map((row) => row.payment_number)).toEqual(['1000', '1000', '1000']);
  });

  it('books a seeded share of lines on the next UTC day, as configured', async () => {
    expect((await control(sandbox, 'GET', '/settlement-config')).body).toEqual({
      latePercent: 0,
      seed: 29,
    });
    const put = await control(sandbox, 'PUT', '/settlement-config', { latePercent: 100 });
    expect(put.body).toEqual({ latePercent: 100, seed: 29 });
    const payment = await createPayment(sandbox, token);
    await simulate(payment.id, 'paid');
    const today = await sandboxToday(sandbox);
    expect(await settlementRows(sandbox, today)).toEqual([]);
    const [late] = await settlementRows(sandbox, addDays(today, 1));
    expect(late?.payment_id).toBe(payment.id);
    expect(late?.settlement_date).toBe(addDays(today, 1));

    for (const bad of [
      { latePercent: 101 },
      { latePercent: -1 },
      { latePercent: 10, seed: -1 },
      {},
    ]) {
      expect((await control(sandbox, 'PUT', '/settlement-config', bad)).status).toBe(422);
    }
    await control(sandbox, 'POST', '/reset');
    expect((await control(sandbox, 'GET', '/settlement-config')).body).toEqual({
      latePercent: 0,
      seed: 29,
    });
  });

  it('with the default 10 % and seed 29, books the 8th line since the reset a night late', async () => {
    await control(sandbox, 'PUT', '/settlement-config', { latePercent: 10, seed: 29 });
    const ids: string[] = [];
    for (let n = 0; n < 10; n++) {
      const payment = await createPayment(sandbox, token);
      await simulate(payment.id, 'paid');
      ids.push(payment.id);
    }
    const today = await sandboxToday(sandbox);
    const onTime = await settlementRows(sandbox, today);
    const nextDay = await settlementRows(sandbox, addDays(today, 1));
    expect(onTime.map((row) => row.payment_id)).toEqual(ids.filter((_, n) => n !== 7));
    expect(nextDay.map((row) => row.payment_id)).toEqual([ids[7]]);
  });
});
