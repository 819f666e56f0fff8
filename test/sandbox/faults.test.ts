/**
 * Fault injection: 429 with Retry-After, `times`, `rate`, path patterns, latency, a reset
 * connection, `afterProcessing` (the request took effect but the answer was lost) and late
 * effects: `applyDelayMs` (answered at once, applied later) and a latency fault whose client
 * gave up. Effects are counted in what the sandbox holds (its control API), not only in the
 * answers.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { fetchToken, startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import {
  call,
  control,
  createPayment,
  paymentBody,
  type CreatedPayment,
  type ErrorBody,
  type ValidationBody,
} from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';

describe('sandbox fault injection', () => {
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

  const create = () =>
    call<ErrorBody & { id?: string }>('POST', `${sandbox.url}/api/payments`, {
      token,
      body: paymentBody(),
    });
  const paymentCount = async () =>
    (await control<{ payments: unknown[] }>(sandbox, 'GET', '/payments')).body.payments.length;

  it('answers 429 rate_limited with Retry-After, `times` times, then normally', async () => {
    const added = await control(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments',
      status: 429,
      retryAfterSeconds: 7,
      times: 2,
    });
    expect(added.status).toBe(201);
    for (let attempt = 0; attempt < 2; attempt++) {
      const limited = await create();
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('7');
      expect(limited.body.code).toBe('rate_limited');
    }
    expect((await create()).status).toBe(200);
    expect(await paymentCount()).toBe(1);
    expect(
      (await control<{ faults: unknown[] }>(sandbox, 'GET', '/faults')).body.faults,
    ).toHaveLength(0);
  });

  it('matches `*` to one segment and `**` to any, including the /partner prefix; method filters', async () => {
    await control(sandbox, 'POST', '/faults', {
      path: '/api/payments/*/paymentStatus',
      status: 503,
    });
    await control(sandbox, 'POST', '/faults', { method: 'GET', path: '/partner/**', status: 502 });
    const created = await create();
    const id = created.body.id ?? '';
    const status = await call<ErrorBody>('GET', `${sandbox.url}/api/payments/${id}/paymentStatus`, {
      token,
    });
    expect(status.status).toBe(503);
    expect(status.body).toEqual({ code: 'service_unavailable', message: expect.any(String) });
    expect((await call('GET', `${sandbox.partnerUrl}/payment-methods`, { token })).status).toBe(
      502,
    );
    // POST under /partner is not matched by the GET fault; the control API is never faulted
    expect((await fetchToken(sandbox)).length).toBeGreaterThan(10);
    expect((await control(sandbox, 'GET', '/clock')).status).toBe(200);
    const removed = await control<{ removed: number }>(sandbox, 'DELETE', '/faults');
    expect(removed.body.removed).toBe(2);
    expect(
      (await call('GET', `${sandbox.url}/api/payments/${id}/paymentStatus`, { token })).status,
    ).toBe(200);
  });

  it('afterProcessing: the payment exists although the client got an error', async () => {
    await control(sandbox, 'POST', '/faults', {
      path: '/api/payments',
      status: 502,
      afterProcessing: true,
      times: 1,
    });
    const lost = await create();
    expect(lost.status).toBe(502);
    expect(lost.body.id).toBeUndefined();
    expect(await paymentCount()).toBe(1);
  });

  it('reset: the connection is destroyed without an answer (before or after processing)', async () => {
    await control(sandbox, 'POST', '/faults', { path: '/api/payments', reset: true, times: 1 });
    await expect(create()).rejects.toThrow();
    expect(await paymentCount()).toBe(0);
    await control(sandbox, 'POST', '/faults', {
      path: '/api/payments',
      reset: true,
      afterProcessing: true,
      times: 1,
    });
    await expect(create()).rejects.toThrow();
    expect(await paymentCount()).toBe(1);
  });

  it('adds latency, alone or with a status', async () => {
    await control(sandbox, 'POST', '/faults', {
      path: '/partner/auth/ping',
      latencyMs: 150,
      times: 1,
    });
    const started = performance.now();
    const answer = await call('GET', `${sandbox.partnerUrl}/auth/ping`, { token });
    expect(answer.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('applies a fault at the given rate', async () => {
    await control(sandbox, 'POST', '/faults', { path: '/partner/auth/ping', status: 500, rate: 0 });
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await call('GET', `${sandbox.partnerUrl}/auth/ping`, { token })).status).toBe(200);
    }
    await control(sandbox, 'DELETE', '/faults');
    await control(sandbox, 'POST', '/faults', { path: '/partner/auth/ping', status: 500, rate: 1 });
    expect((await call('GET', `${sandbox.partnerUrl}/auth/ping`, { token })).status).toBe(500);
  });

  it('refuses a fault without status, latencyMs or reset (422)', async () => {
    const answer = await control(sandbox, 'POST', '/faults', { path: '/api/payments' });
    expect(answer.status).toBe(422);
  });

  it('SANDBOX latencyMs adds a fixed latency to Payflow calls, not to control calls', async () => {
    const slow = await startTestSandbox({ latencyMs: 120 });
    try {
      let started = performance.now();
      const slowToken = await fetchToken(slow);
      expect(performance.now() - started).toBeGreaterThanOrEqual(110);
      started = performance.now();
      await call('GET', `${slow.partnerUrl}/auth/ping`, { token: slowToken });
      expect(performance.now() - started).toBeGreaterThanOrEqual(110);
      started = performance.now();
      await control(slow, 'GET', '/clock');
      expect(performance.now() - started).toBeLessThan(100);
    } finally {
      await slow.close();
    }
  });

  describe('late effects', () => {
    const INSTALLMENTS = '/api/payments/*/installments/create';
    const newInstallment = { date: '2030-03-01', grossAmount: 250 };

    interface Held {
      status: string;
      installments: unknown[] | null;
      documents: { fileName: string }[];
    }
    interface LateStats {
      lateApplications: { pending: number; applied: number; failed: number; cancelled: number };
    }
    /** What the sandbox holds of a payment, read through the control API. */
    const held = async (id: string): Promise<Held> =>
      (await control<Held>(sandbox, 'GET', `/payments/${id}`)).body;
    const installmentsHeld = async (id: string) => (await held(id)).installments?.length ?? 0;
    const lateStats = async () =>
      (await control<LateStats>(sandbox, 'GET', '/stats')).body.lateApplications;
    const installmentPayment = (): Promise<CreatedPayment> =>
      createPayment(sandbox, token, {
        total: 1000,
        installments: [
          { date: '2030-01-01', grossAmount: 400 },
          { date: '2030-02-01', grossAmount: 600 },
        ],
      });
    /** Polls until `done` holds; the milliseconds since `since` when it did. */
    const waitUntil = async (
      done: () => Promise<boolean>,
      since: number,
      timeoutMs = 10_000,
    ): Promise<number> => {
      while (!(await done())) {
        if (performance.now() - since > timeoutMs) throw new Error('the effect never landed');
        await sleep(20);
      }
      return performance.now() - since;
    };

    it('applyDelayMs: 504 at once, the installment appears ~500 ms later, once', async () => {
      const payment = await installmentPayment();
      await control(sandbox, 'POST', '/faults', {
        method: 'POST',
        path: INSTALLMENTS,
        status: 504,
        applyDelayMs: 500,
        times: 1,
      });
      const started = performance.now();
      const answer = await call<ErrorBody>(
        'POST',
        `${sandbox.url}/api/payments/${payment.id}/installments/create`,
        { token, body: newInstallment },
      );
      expect(answer.status).toBe(504);
      expect(answer.body.code).toBe('gateway_timeout');
      // The answer came before the effect: the sandbox holds the two installments only.
      expect(await installmentsHeld(payment.id)).toBe(2);
      expect(await lateStats()).toMatchObject({ pending: 1, applied: 0 });

      const landedMs = await waitUntil(
        async () => (await installmentsHeld(payment.id)) === 3,
        started,
      );
      expect(landedMs).toBeGreaterThanOrEqual(490);
      expect(landedMs).toBeLessThan(3_000);
      await sleep(300);
      expect(await installmentsHeld(payment.id)).toBe(3);
      expect(await lateStats()).toMatchObject({ pending: 0, applied: 1, failed: 0 });
    });

    it('a latency fault still applies after the client gave up', async () => {
      const payment = await installmentPayment();
      await control(sandbox, 'POST', '/faults', {
        method: 'POST',
        path: INSTALLMENTS,
        latencyMs: 2_000,
        times: 1,
      });
      const started = performance.now();
      const request = fetch(`${sandbox.url}/api/payments/${payment.id}/installments/create`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(newInstallment),
        // The client's own time-out, far shorter than the latency (the bridge's 3 s vs 8 s).
        signal: AbortSignal.timeout(300),
      });
      await expect(request).rejects.toThrow();
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(await installmentsHeld(payment.id)).toBe(2);

      const landedMs = await waitUntil(
        async () => (await installmentsHeld(payment.id)) === 3,
        started,
      );
      expect(landedMs).toBeGreaterThanOrEqual(1_990);
      expect(landedMs).toBeLessThan(5_000);
      await sleep(200);
      expect(await installmentsHeld(payment.id)).toBe(3);
    });

    it('applies later with the request as received: its token, organization header and body', async () => {
      // A client of two organizations must name one (X-Organization-Id): the late handler
      // finds the payment only if it still reads the request's headers.
      await control(sandbox, 'POST', '/organizations', { id: 'org-2' });
      await control(sandbox, 'POST', '/clients', {
        clientId: 'two-orgs',
        clientSecret: 'secret',
        scopes: ['organization:payflow:create', 'organization:payflow:update'],
        organizationIds: ['org-1', 'org-2'],
      });
      const twoOrgs = await fetchToken(sandbox, 'two-orgs', 'secret');
      const payment = await createPayment(sandbox, twoOrgs, {}, 'org-2');
      const cancelled = await createPayment(sandbox, twoOrgs, {}, 'org-2');
      await control(sandbox, 'POST', '/faults', {
        method: 'POST',
        path: '/api/payments/uploadDocument',
        status: 502,
        applyDelayMs: 200,
      });
      await control(sandbox, 'POST', '/faults', {
        method: 'DELETE',
        path: '/api/payments/*',
        status: 503,
        applyDelayMs: 200,
      });
      const started = performance.now();
      const upload = await call('POST', `${sandbox.url}/api/payments/uploadDocument`, {
        token: twoOrgs,
        organizationId: 'org-2',
        body: {
          paymentId: payment.id,
          fileName: 'late.pdf',
          contentType: 'application/pdf',
          contentBase64: Buffer.from('%PDF-1.7 late').toString('base64'),
        },
      });
      const cancel = await call('DELETE', `${sandbox.url}/api/payments/${cancelled.id}`, {
        token: twoOrgs,
        organizationId: 'org-2',
      });
      expect([upload.status, cancel.status]).toEqual([502, 503]);
      expect((await held(payment.id)).documents).toEqual([]);
      expect((await held(cancelled.id)).status).toBe('DRAFT');

      // A cancelled payment is REJECTED at Payflow (docs/assumptions.md).
      await waitUntil(
        async () =>
          (await held(payment.id)).documents.length === 1 &&
          (await held(cancelled.id)).status === 'REJECTED',
        started,
      );
      expect((await held(payment.id)).documents).toEqual([
        expect.objectContaining({ fileName: 'late.pdf' }),
      ]);
      expect(await lateStats()).toMatchObject({ applied: 2, failed: 0 });
    });

    it('a reset cancels the late applications still pending', async () => {
      const payment = await installmentPayment();
      await control(sandbox, 'POST', '/faults', {
        path: INSTALLMENTS,
        status: 504,
        applyDelayMs: 300,
      });
      const path = `${sandbox.url}/api/payments/${payment.id}/installments/create`;
      expect((await call('POST', path, { token, body: newInstallment })).status).toBe(504);
      expect(await lateStats()).toMatchObject({ pending: 1 });
      await control(sandbox, 'POST', '/reset');
      expect(await lateStats()).toEqual({ pending: 0, applied: 0, failed: 0, cancelled: 0 });
      await sleep(500);
      expect(await lateStats()).toEqual({ pending: 0, applied: 0, failed: 0, cancelled: 0 });
    });

    it('removing the faults leaves the late applications already answered to land', async () => {
      const payment = await installmentPayment();
      await control(sandbox, 'POST', '/faults', {
        path: INSTALLMENTS,
        status: 504,
        applyDelayMs: 200,
      });
      const path = `${sandbox.url}/api/payments/${payment.id}/installments/create`;
      expect((await call('POST', path, { token, body: newInstallment })).status).toBe(504);
      await control(sandbox, 'DELETE', '/faults');
      await waitUntil(async () => (await installmentsHeld(payment.id)) === 3, performance.now());
    });

    it('refuses applyDelayMs without status, or with reset or afterProcessing (422 naming it)', async () => {
      for (const fault of [
        { path: INSTALLMENTS, latencyMs: 10, applyDelayMs: 500 },
        { path: INSTALLMENTS, status: 504, reset: true, applyDelayMs: 500 },
        { path: INSTALLMENTS, status: 504, afterProcessing: true, applyDelayMs: 500 },
        { path: INSTALLMENTS, status: 504, applyDelayMs: -1 },
        { path: INSTALLMENTS, status: 504, applyDelayMs: 120_001 },
      ]) {
        const answer = await control<ValidationBody>(sandbox, 'POST', '/faults', fault);
        expect(answer.status).toBe(422);
        expect(answer.body.detail).toEqual([
          expect.objectContaining({ loc: ['body', 'applyDelayMs'] }),
        ]);
      }
      const missing = await control<ValidationBody>(sandbox, 'POST', '/faults', {
        path: INSTALLMENTS,
        latencyMs: 10,
        applyDelayMs: 500,
      });
      expect(missing.body.detail[0]).toMatchObject({
        msg: expect.stringContaining('applyDelayMs needs status'),
        type: 'value_error.apply_delay_needs_status',
      });
      expect((await control<{ faults: unknown[] }>(sandbox, 'GET', '/faults')).body.faults).toEqual(
        [],
      );
    });

    it('closing the sandbox does not wait for pending late applications', async () => {
      const own = await startTestSandbox();
      const ownToken = await fetchToken(own);
      const payment = await createPayment(own, ownToken);
      await control(own, 'POST', '/faults', {
        path: '/api/payments/*',
        method: 'DELETE',
        status: 504,
        applyDelayMs: 60_000,
      });
      const answer = await call('DELETE', `${own.url}/api/payments/${payment.id}`, {
        token: ownToken,
      });
      expect(answer.status).toBe(504);
      const started = performance.now();
      await own.close();
      expect(performance.now() - started).toBeLessThan(2_000);
    });
  });
});
