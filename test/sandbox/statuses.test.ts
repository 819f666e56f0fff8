/**
 * Every status the spec lists is reachable (docs/assumptions.md, payment and installment
 * states): SENT after creation when the payment link is sent, DRAFT when it is not, and
 * PENDING for a payment or an installment whose payment is being processed.
 */
import { describe, expect, it } from '@jest/globals';
import { type SandboxHandle } from '../support/sandbox.js';
import {
  call,
  control,
  paymentBody,
  type CreatedPayment,
  type InstallmentRecord,
  type PaymentStatusBody,
} from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';

const TERMINAL = '000000000000000000000001';
const LINK = '000000000000000000000000';
const PLAN = [
  { date: '2030-01-01', grossAmount: 50 },
  { date: '2030-02-01', grossAmount: 50 },
];

interface SimulateAnswer {
  payment: { status: string; installments: InstallmentRecord[] | null };
  deliveries: { payload: { change: string; paymentStatus: string } }[];
}

describe('sandbox statuses', () => {
  let sandbox: SandboxHandle;
  let token: string;

  useTestSandbox({
    started: (started) => {
      sandbox = started;
    },
    token: (fresh) => {
      token = fresh;
    },
  });

  const create = async (communication?: Record<string, boolean>): Promise<CreatedPayment> => {
    const body = paymentBody({
      total: 100,
      installments: PLAN,
      callback: { url: 'https://127.0.0.1:1/hook' },
    });
    if (communication) body.communication = communication;
    const answer = await call<CreatedPayment>('POST', `${sandbox.url}/api/payments`, {
      token,
      body,
    });
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const status = async (id: string) =>
    (
      await call<PaymentStatusBody>('GET', `${sandbox.url}/api/payments/${id}/paymentStatus`, {
        token,
      })
    ).body;
  const installmentStatuses = async (id: string) =>
    (await status(id)).installments?.map((entry) => entry.status);
  const simulate = (id: string, action: string, installmentId?: string) =>
    control<SimulateAnswer>(sandbox, 'POST', `/payments/${id}/simulate`, {
      action,
      ...(installmentId === undefined ? {} : { installmentId }),
    });

  describe('the payment link', () => {
    it('is sent right after creation by default: CREATED in the answer, then SENT', async () => {
      for (const communication of [undefined, { send_payment_link: true }]) {
        const payment = await create(communication);
        expect(payment.installments?.map((entry) => entry.status)).toEqual(['CREATED', 'CREATED']);
        expect(await installmentStatuses(payment.id)).toEqual(['SENT', 'SENT']);
        expect((await status(payment.id)).paymentStatus.paymentStatus).toBe('DRAFT');
      }
    });

    it('keeps installments DRAFT while send_payment_link is false, until the payment is sent', async () => {
      const payment = await create({ send_payment_link: false });
      expect(payment.installments?.map((entry) => entry.status)).toEqual(['DRAFT', 'DRAFT']);
      expect(await installmentStatuses(payment.id)).toEqual(['DRAFT', 'DRAFT']);
      const added = await call<InstallmentRecord>(
        'POST',
        `${sandbox.url}/api/payments/${payment.id}/installments/create`,
        { token, body: { date: '2030-03-01', grossAmount: 10 } },
      );
      expect(added.body.status).toBe('DRAFT');
      const resend = await call('POST', `${sandbox.partnerUrl}/payment-methods/resend`, {
        token,
        body: { paymentId: payment.id, paymentMethodId: LINK },
      });
      expect(resend.status).toBe(200);
      expect(await installmentStatuses(payment.id)).toEqual(['SENT', 'SENT', 'SENT']);
    });

    it('a DRAFT payment sent to a terminal has CREATED installments; opening makes them OPENED', async () => {
      const payment = await create({ send_payment_link: false });
      await call('POST', `${sandbox.partnerUrl}/payment-methods/resend`, {
        token,
        body: { paymentId: payment.id, paymentMethodId: TERMINAL, terminalId: 'terminal-1' },
      });
      expect(await installmentStatuses(payment.id)).toEqual(['CREATED', 'CREATED']);
      await simulate(payment.id, 'opened');
      expect(await installmentStatuses(payment.id)).toEqual(['OPENED', 'OPENED']);
    });

    it('an installment added to a payment whose link was sent is CREATED', async () => {
      const payment = await create();
      const added = await call<InstallmentRecord>(
        'POST',
        `${sandbox.url}/api/payments/${payment.id}/installments/create`,
        { token, body: { date: '2030-03-01', grossAmount: 10 } },
      );
      expect(added.body.status).toBe('CREATED');
    });
  });

  describe('PENDING', () => {
    it('a payment being processed is PENDING, then SUCCESS', async () => {
      const payment = await create();
      await simulate(payment.id, 'opened');
      const pending = await simulate(payment.id, 'pending');
      expect(pending.status).toBe(200);
      expect(pending.body.payment.status).toBe('PENDING');
      expect(pending.body.deliveries[0]?.payload).toMatchObject({
        change: 'pending',
        paymentStatus: 'PENDING',
      });
      expect((await status(payment.id)).paymentStatus.paymentStatus).toBe('PENDING');
      await simulate(payment.id, 'paid');
      expect((await status(payment.id)).paymentStatus.paymentStatus).toBe('SUCCESS');
      expect((await simulate(payment.id, 'pending')).status).toBe(409);
    });

    it('an installment whose debit is running is PENDING, then PAID or FAILED', async () => {
      const payment = await create();
      const [first, second] = payment.installments ?? [];
      const running = await simulate(payment.id, 'installment_pending', first?.id);
      expect(running.status).toBe(200);
      expect(await installmentStatuses(payment.id)).toEqual(['PENDING', 'SENT']);
      await simulate(payment.id, 'installment_paid', first?.id);
      expect(await installmentStatuses(payment.id)).toEqual(['PAID', 'SENT']);
      await simulate(payment.id, 'installment_pending'); // the first open one
      expect(await installmentStatuses(payment.id)).toEqual(['PAID', 'PENDING']);
      await simulate(payment.id, 'installment_failed', second?.id);
      expect(await installmentStatuses(payment.id)).toEqual(['PAID', 'FAILED']);
      expect((await simulate(payment.id, 'installment_pending', first?.id)).status).toBe(409);
    });
  });
});
