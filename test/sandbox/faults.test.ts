/**
 * Fault injection: 429 with Retry-After, `times`, `rate`, path patterns, latency, a reset
 * connection, and `afterProcessing` (the request took effect but the answer was lost).
 */
import { describe, expect, it } from '@jest/globals';
import { fetchToken, startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import { call, control, paymentBody, type ErrorBody } from './helpers.js';
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
});
