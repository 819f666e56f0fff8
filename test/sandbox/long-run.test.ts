/**
 * A sandbox left running (docs/sandbox.md, "A long run"): what it keeps is bounded, a
 * forgotten payment is gone with its scheduled debits, and the control API's listings are
 * paged (limit, cursor → nextCursor) with a default page size.
 */
import { describe, expect, it } from '@jest/globals';
import type { SandboxHandle } from '../support/sandbox.js';
import { call, control, paymentBody, type ValidationBody } from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';

interface Listed {
  id: string;
  paymentNumber: number;
  status: string;
}
interface PaymentsPage {
  payments: Listed[];
  nextCursor: string | null;
}
interface DeliveriesPage {
  deliveries: { id: string; paymentId: string }[];
  nextCursor: string | null;
}

let sandbox: SandboxHandle;
let token: string;
useTestSandbox({
  options: { retention: { maxPayments: 5, maxWebhookDeliveries: 4, maxMovements: 3 } },
  started: (started) => (sandbox = started),
  token: (fresh) => (token = fresh),
});

async function create(n: number, extra: Parameters<typeof paymentBody>[0] = {}): Promise<string> {
  const answer = await call<{ id: string }>('POST', `${sandbox.url}/api/payments`, {
    token,
    body: {
      ...paymentBody({ internalRef: `SO-${n}`, orderNumber: `SO-${n}`, ...extra }),
      callback: { url: `http://hooks.example.test/${n}` }, // not https: recorded as skipped
    },
  });
  expect(answer.status).toBe(200);
  return answer.body.id;
}

async function everyPayment(limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`;
    const page: PaymentsPage = (await control<PaymentsPage>(sandbox, 'GET', `/payments${query}`))
      .body;
    ids.push(...page.payments.map((payment) => payment.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== null);
  return { ids, pages };
}

describe('sandbox over a long run', () => {
  it('keeps at most SANDBOX_MAX_PAYMENTS payments, forgetting a finished one before the oldest', async () => {
    const ids: string[] = [];
    for (let n = 1; n <= 5; n++) ids.push(await create(n));
    await control(sandbox, 'POST', `/payments/${ids[2] ?? ''}/simulate`, { action: 'paid' });
    ids.push(await create(6)); // the third, paid, goes first
    ids.push(await create(7)); // then the oldest: the first
    const kept = await everyPayment(2);
    expect(kept.ids).toEqual([ids[1], ids[3], ids[4], ids[5], ids[6]]);
    expect(kept.pages).toBe(3);
    for (const gone of [ids[0], ids[2]]) {
      expect((await control(sandbox, 'GET', `/payments/${gone ?? ''}`)).status).toBe(404);
      const status = await call('GET', `${sandbox.url}/api/payments/${gone ?? ''}/paymentStatus`, {
        token,
      });
      expect(status.status).toBe(404);
    }
    const stats = await control<{ payments: number; limits: { payments: number } }>(
      sandbox,
      'GET',
      '/stats',
    );
    expect(stats.body.payments).toBe(5);
    expect(stats.body.limits.payments).toBe(5);
  });

  it('drops the scheduled debits of a forgotten payment', async () => {
    const installments = [
      { date: '2030-01-01', grossAmount: 624.75 },
      { date: '2031-01-01', grossAmount: 624.75 },
    ];
    await create(1, { installments });
    const before = await control<{ scheduledJobs: number }>(sandbox, 'GET', '/stats');
    expect(before.body.scheduledJobs).toBe(1);
    for (let n = 2; n <= 6; n++) await create(n);
    const after = await control<{ scheduledJobs: number; payments: number }>(
      sandbox,
      'GET',
      '/stats',
    );
    expect(after.body.payments).toBe(5);
    expect(after.body.scheduledJobs).toBe(0);
  });

  it('pages the payments with a default page size, and refuses a bad limit or cursor', async () => {
    for (let n = 1; n <= 3; n++) await create(n);
    const first = await control<PaymentsPage>(sandbox, 'GET', '/payments');
    expect(first.body.payments).toHaveLength(3);
    expect(first.body.nextCursor).toBeNull();
    const one = await control<PaymentsPage>(sandbox, 'GET', '/payments?limit=1');
    expect(one.body.payments).toHaveLength(1);
    expect(one.body.nextCursor).toBe(String(one.body.payments[0]?.paymentNumber));
    const rest = await control<PaymentsPage>(
      sandbox,
      'GET',
      `/payments?limit=5&cursor=${one.body.nextCursor ?? ''}`,
    );
    expect(rest.body.payments.map((payment) => payment.id)).toEqual(
      first.body.payments.slice(1).map((payment) => payment.id),
    );
    for (const query of ['limit=0', 'limit=5001', 'limit=ten', 'cursor=abc']) {
      const bad = await control<ValidationBody>(sandbox, 'GET', `/payments?${query}`);
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0]?.loc[0]).toBe('query');
    }
  });

  it('keeps at most SANDBOX_MAX_WEBHOOK_DELIVERIES deliveries and pages them, per payment too', async () => {
    const ids: string[] = [];
    for (let n = 1; n <= 3; n++) {
      const id = await create(n);
      ids.push(id);
      await control(sandbox, 'POST', `/payments/${id}/simulate`, { action: 'opened' });
      await control(sandbox, 'POST', `/payments/${id}/simulate`, { action: 'paid' });
    }
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/webhook-deliveries?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`;
      const page: DeliveriesPage = (await control<DeliveriesPage>(sandbox, 'GET', path)).body;
      all.push(...page.deliveries.map((delivery) => delivery.paymentId));
      cursor = page.nextCursor;
    } while (cursor !== null);
    // Two webhooks per payment (opened, paid), six in all: the first two are forgotten.
    expect(all).toEqual([ids[1], ids[1], ids[2], ids[2]]);
    const ofFirst = await control<DeliveriesPage>(
      sandbox,
      'GET',
      `/webhook-deliveries?paymentId=${ids[0] ?? ''}`,
    );
    expect(ofFirst.body).toEqual({ deliveries: [], nextCursor: null });
    const ofLast = await control<DeliveriesPage>(
      sandbox,
      'GET',
      `/webhook-deliveries?paymentId=${ids[2] ?? ''}&limit=1`,
    );
    expect(ofLast.body.deliveries).toHaveLength(1);
    expect(ofLast.body.nextCursor).not.toBeNull();
  });

  it('keeps at most SANDBOX_MAX_SETTLEMENT_MOVEMENTS rows, forgetting the oldest dates', async () => {
    await control(sandbox, 'POST', '/settlements', { date: '2026-03-01', count: 2 });
    await control(sandbox, 'POST', '/settlements', { date: '2026-03-02', count: 2 });
    const csv = async (date: string): Promise<number> => {
      const answer = await call(
        'GET',
        `${sandbox.partnerUrl}/settlements/generate_csv?from=${date}&to=${date}`,
        { token },
      );
      expect(answer.status).toBe(200);
      return answer.text.trim().split('\r\n').length - 1;
    };
    expect(await csv('2026-03-01')).toBe(0);
    expect(await csv('2026-03-02')).toBe(2);
  });
});
