/**
 * Conformance, group B (partner): payment methods, re-send, terminal receipt, manual-paid,
 * settlement CSV; plus the payer simulation and installment debits on the virtual clock.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { fetchToken, type SandboxHandle } from '../support/sandbox.js';
import {
  call,
  control,
  createPayment,
  type ErrorBody,
  type PaymentStatusBody,
  type ValidationBody,
} from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';

const LINK = '000000000000000000000000';
const TERMINAL = '000000000000000000000001';
const INVOICE = '000000000000000000000002';

interface PaymentMethodsBody {
  paymentMethods: {
    id: string;
    name: string;
    type: string;
    terminals?: { id: string }[];
    invoiceTypes?: string[];
  }[];
}

describe('sandbox group B', () => {
  let sandbox: SandboxHandle;
  let token: string;
  let partner: string;

  useTestSandbox({
    started: (started) => {
      sandbox = started;
    },
    token: (fresh) => {
      token = fresh;
    },
  });
  beforeAll(() => {
    partner = sandbox.partnerUrl;
  });

  const status = async (paymentId: string) =>
    (
      await call<PaymentStatusBody>(
        'GET',
        `${sandbox.url}/api/payments/${paymentId}/paymentStatus`,
        { token },
      )
    ).body;
  const simulate = (paymentId: string, action: string, installmentId?: string) =>
    control(sandbox, 'POST', `/payments/${paymentId}/simulate`, {
      action,
      ...(installmentId ? { installmentId } : {}),
    });

  describe('GET /partner/payment-methods', () => {
    it('lists the payment link (24 zeros), a terminal method and an invoice method', async () => {
      const answer = await call<PaymentMethodsBody>('GET', `${partner}/payment-methods`, { token });
      expect(answer.status).toBe(200);
      const byType = new Map(answer.body.paymentMethods.map((method) => [method.type, method]));
      expect(byType.get('payment_link')?.id).toBe(LINK);
      expect(byType.get('terminal')?.terminals?.length).toBeGreaterThan(0);
      expect(byType.get('invoice')?.invoiceTypes?.length).toBeGreaterThan(0);
    });

    it('changes over time (PUT /sandbox/payment-methods)', async () => {
      await control(sandbox, 'PUT', '/payment-methods', {
        paymentMethods: [
          { id: LINK, name: 'Link', type: 'payment_link' },
          {
            id: 'abcdefabcdefabcdefabcdef',
            name: 'Kiosk',
            type: 'terminal',
            terminals: [{ id: 'k1', name: 'Kiosk 1' }],
          },
        ],
      });
      const answer = await call<PaymentMethodsBody>('GET', `${partner}/payment-methods`, { token });
      expect(answer.body.paymentMethods.map((method) => method.id)).toEqual([
        LINK,
        'abcdefabcdefabcdefabcdef',
      ]);
      expect(
        (await createPayment(sandbox, token, { paymentMethodId: 'abcdefabcdefabcdefabcdef' })).id,
      ).toBeTruthy();
    });
  });

  describe('POST /partner/payment-methods/resend', () => {
    it('re-sends to the link, a terminal and an invoice type; needs terminalId / invoiceType', async () => {
      const payment = await createPayment(sandbox, token);
      const resend = (body: Record<string, unknown>) =>
        call<Record<string, unknown>>('POST', `${partner}/payment-methods/resend`, {
          token,
          body: { paymentId: payment.id, ...body },
        });
      for (const body of [
        { paymentMethodId: LINK },
        { paymentMethodId: TERMINAL, terminalId: 'terminal-1' },
        { paymentMethodId: INVOICE, invoiceType: 'email' },
      ]) {
        const answer = await resend(body);
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({
          paymentId: payment.id,
          paymentMethodId: body.paymentMethodId,
          status: 'accepted',
        });
      }
      // it can be called repeatedly and creates no new payment
      expect((await resend({ paymentMethodId: LINK })).status).toBe(200);
      const payments = await control<{ payments: unknown[] }>(sandbox, 'GET', '/payments');
      expect(payments.body.payments).toHaveLength(1);

      const types = async (body: Record<string, unknown>) =>
        ((await resend(body)).body as unknown as ValidationBody).detail[0]?.type;
      expect(await types({ paymentMethodId: TERMINAL })).toBe('business.terminal_required');
      expect(await types({ paymentMethodId: INVOICE })).toBe('business.invoice_type_required');
      expect(await types({ paymentMethodId: 'ffffffffffffffffffffffff' })).toBe(
        'business.unknown_payment_method',
      );
    });
  });

  describe('POST /partner/payments/{id}/manual-paid', () => {
    it('marks a payment PAID, and is refused on a final status', async () => {
      const payment = await createPayment(sandbox, token);
      const url = `${partner}/payments/${payment.id}/manual-paid`;
      const answer = await call('POST', url, { token, body: { note: 'paid cash' } });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ paymentId: payment.id, paymentStatus: 'PAID' });
      expect((await status(payment.id)).paymentStatus.paymentStatus).toBe('PAID');
      const again = await call<ValidationBody>('POST', url, { token, body: {} });
      expect(again.status).toBe(422);
      expect(again.body.detail[0]?.type).toBe('business.payment_final');

      for (const action of ['paid', 'rejected']) {
        const other = await createPayment(sandbox, token);
        await simulate(other.id, action);
        const refused = await call<ValidationBody>(
          'POST',
          `${partner}/payments/${other.id}/manual-paid`,
          { token },
        );
        expect(refused.body.detail[0]?.type).toBe('business.payment_final');
      }
    });
  });

  describe('POST /partner/payments/{id}/receipts/terminal/print', () => {
    it('prints for a paid payment on the last terminal used, refuses an unpaid one', async () => {
      const payment = await createPayment(sandbox, token);
      const url = `${partner}/payments/${payment.id}/receipts/terminal/print`;
      const unpaid = await call<ValidationBody>('POST', url, { token, body: {} });
      expect(unpaid.body.detail[0]?.type).toBe('business.payment_not_paid');
      await call('POST', `${partner}/payment-methods/resend`, {
        token,
        body: { paymentId: payment.id, paymentMethodId: TERMINAL, terminalId: 'terminal-2' },
      });
      await simulate(payment.id, 'paid');
      const printed = await call('POST', url, { token });
      expect(printed.status).toBe(200);
      expect(printed.body).toEqual({
        paymentId: payment.id,
        terminalId: 'terminal-2',
        status: 'printed',
      });
      const chosen = await call('POST', url, { token, body: { terminalId: 'terminal-1' } });
      expect(chosen.body.terminalId).toBe('terminal-1');
    });
  });

  describe('payer simulation and debits', () => {
    it('follows DRAFT → OPENED → SUCCESS for a link payment', async () => {
      const payment = await createPayment(sandbox, token);
      await simulate(payment.id, 'opened');
      expect((await status(payment.id)).paymentStatus.paymentStatus).toBe('OPENED');
      await simulate(payment.id, 'paid');
      expect((await status(payment.id)).paymentStatus.paymentStatus).toBe('SUCCESS');
      const late = await simulate(payment.id, 'opened');
      expect(late.status).toBe(409);
    });

    it('cancelled by the payer: REJECTED, installments CANCELLED', async () => {
      const payment = await createPayment(sandbox, token, {
        total: 100,
        installments: [
          { date: '2030-01-01', grossAmount: 50 },
          { date: '2030-02-01', grossAmount: 50 },
        ],
      });
      await simulate(payment.id, 'cancelled');
      const after = await status(payment.id);
      expect(after.paymentStatus.paymentStatus).toBe('REJECTED');
      expect(after.installments?.map((entry) => entry.status)).toEqual(['CANCELLED', 'CANCELLED']);
    });

    it('debits scheduled installments on their dates (virtual clock); a failed one is retried the next day', async () => {
      const clock = await control<{ now: string }>(sandbox, 'GET', '/clock');
      const day = (offset: number) =>
        new Date(Date.parse(clock.body.now) + offset * 86_400_000).toISOString().slice(0, 10);
      const payment = await createPayment(sandbox, token, {
        total: 300,
        installments: [
          { date: day(0), grossAmount: 100 },
          { date: day(10), grossAmount: 100 },
          { date: day(20), grossAmount: 100 },
        ],
      });
      const [first, second, third] = payment.installments ?? [];
      await simulate(payment.id, 'installment_paid', first?.id);
      let now = await status(payment.id);
      expect(now.paymentStatus.paymentStatus).toBe('INITIATED');
      expect(now.installments?.[0]?.status).toBe('PAID');

      await simulate(payment.id, 'installment_failed', second?.id);
      now = await status(payment.id);
      expect(now.installments?.[1]).toMatchObject({ status: 'FAILED', numTried: 1, numFailed: 1 });
      expect(now.installments?.[1]?.lastFailedAt).toEqual(expect.any(String));

      await control(sandbox, 'POST', '/clock/advance', { minutes: 24 * 60 });
      token = await fetchToken(sandbox); // the old one expired on the virtual clock
      now = await status(payment.id);
      expect(now.installments?.[1]).toMatchObject({ status: 'PAID', numTried: 2, numFailed: 1 });
      expect(now.installments?.[2]?.status).toBe('SENT');

      await control(sandbox, 'POST', '/clock/advance', { minutes: 20 * 24 * 60 });
      token = await fetchToken(sandbox);
      now = await status(payment.id);
      expect(now.installments?.[2]?.status).toBe('PAID');
      expect(now.installments?.[2]?.successfullyChargedAt).toBe(`${day(20)}T00:00:00.000Z`);
      expect(now.paymentStatus.paymentStatus).toBe('SUCCESS');
      expect(third?.id).toBeTruthy();
    });
  });

  describe('GET /partner/settlements/generate_csv', () => {
    it('has one row per booked movement in the range, refunds negative, card fee 1.4 % + 1.00', async () => {
      const payment = await createPayment(sandbox, token, {
        total: 1249.5,
        net: 999.6,
        internalRef: 'SO-9',
        orderNumber: 'ORD-9',
      });
      await simulate(payment.id, 'paid');
      await call('POST', `${sandbox.url}/api/refund`, {
        token,
        body: {
          crossPayment: payment.id,
          currency: 'NOK',
          totalGrossAmount: 100.1,
          totalNetAmount: 80.08,
        },
      });
      const clock = await control<{ now: string }>(sandbox, 'GET', '/clock');
      const today = clock.body.now.slice(0, 10);
      const answer = await call(
        'GET',
        `${partner}/settlements/generate_csv?from=${today}&to=${today}&format=standard`,
        {
          token,
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      const lines = answer.text.split('\r\n');
      expect(lines[0]).toBe(
        'settlement_id,settlement_date,organization_id,payment_id,payment_number,installment_id,internal_ref,order_number,transaction_type,currency,gross_amount,fee_amount,net_amount,booked_at',
      );
      expect(lines).toHaveLength(4); // header, payment, refund, final empty line after the last CRLF
      const payRow = lines[1]?.split(',') ?? [];
      const refundRow = lines[2]?.split(',') ?? [];
      expect(payRow.slice(1, 13)).toEqual([
        today,
        'org-1',
        payment.id,
        '1000',
        '',
        'SO-9',
        'ORD-9',
        'payment',
        'NOK',
        '1249.50',
        '18.49', // 1.4 % of 1249.50 = 17.493 → 17.49, + 1.00
        '1231.01',
      ]);
      // the refund gives back the rate part (1.4 % of 100.10 = 1.4014 → 1.40), not the 1.00
      expect(refundRow.slice(8, 13)).toEqual(['refund', 'NOK', '-100.10', '-1.40', '-98.70']);
      expect(payRow[13]?.slice(0, 10)).toBe(today);

      const empty = await call(
        'GET',
        `${partner}/settlements/generate_csv?from=2000-01-01&to=2000-01-31`,
        { token },
      );
      expect(empty.text.split('\r\n').filter(Boolean)).toHaveLength(1);
      const bad = await call<ValidationBody>(
        'GET',
        `${partner}/settlements/generate_csv?from=2030-02-01&to=2030-01-01`,
        {
          token,
        },
      );
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0]?.loc).toEqual(['query', 'to']);
      const missing = await call<ValidationBody>('GET', `${partner}/settlements/generate_csv`, {
        token,
      });
      expect(missing.body.detail.map((entry) => entry.loc)).toEqual([
        ['query', 'from'],
        ['query', 'to'],
      ]);
    });

    it('refuses dates that do not exist with 422 at the parameter', async () => {
      for (const [from, to, bad] of [
        ['2026-02-30', '2026-03-01', 'from'],
        ['2026-02-01', '2026-02-29', 'to'],
        ['2026-13-01', '2026-13-02', 'from'],
      ] as const) {
        const answer = await call<ValidationBody>(
          'GET',
          `${partner}/settlements/generate_csv?from=${from}&to=${to}`,
          { token },
        );
        expect(answer.status).toBe(422);
        expect(answer.body.detail[0]).toEqual({
          loc: ['query', bad],
          msg: expect.any(String),
          type: 'value_error.date',
        });
      }
      const leap = await call(
        'GET',
        `${partner}/settlements/generate_csv?from=2024-02-29&to=2024-02-29`,
        {
          token,
        },
      );
      expect(leap.status).toBe(200);
    });

    it('needs a valid token but no scope (the spec shows none)', async () => {
      const createOnly = await fetchToken(
        sandbox,
        'sandbox-client',
        'sandbox-secret',
        'organization:payflow:create',
      );
      const url = `${partner}/settlements/generate_csv?from=2030-01-01&to=2030-01-01`;
      expect((await call('GET', url, { token: createOnly })).status).toBe(200);
      const anonymous = await call<ErrorBody>('GET', url);
      expect(anonymous.status).toBe(401);
    });
  });
});
