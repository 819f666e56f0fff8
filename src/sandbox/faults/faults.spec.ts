import { describe, expect, it } from '@jest/globals';
import {
  FaultRegistry,
  MAX_FAULT_DELAY_MS,
  compilePathPattern,
  faultSpecSchema,
} from './faults.js';

describe('compilePathPattern', () => {
  const matches = (pattern: string, path: string) => compilePathPattern(pattern).test(path);

  it('matches literally, ignoring a trailing slash', () => {
    expect(matches('/api/payments', '/api/payments')).toBe(true);
    expect(matches('/api/payments', '/api/payments/')).toBe(true);
    expect(matches('/api/payments', '/api/payments/x')).toBe(false);
    expect(matches('/api/payments.x', '/api/paymentsXx')).toBe(false);
  });

  it('* is exactly one segment, or part of one', () => {
    expect(matches('/api/payments/*/paymentStatus', '/api/payments/abc/paymentStatus')).toBe(true);
    expect(matches('/api/payments/*/paymentStatus', '/api/payments//paymentStatus')).toBe(false);
    expect(matches('/api/payments/*', '/api/payments/a/b')).toBe(false);
    expect(matches('/partner/payment-*', '/partner/payment-methods')).toBe(true);
  });

  it('** is any number of segments', () => {
    expect(matches('/partner/**', '/partner')).toBe(true);
    expect(matches('/partner/**', '/partner/auth/token')).toBe(true);
    expect(matches('/**', '/api/payments/a/installments/b')).toBe(true);
    expect(matches('/api/**/create', '/api/payments/a/installments/create')).toBe(true);
    expect(matches('/partner/**', '/api/payments')).toBe(false);
  });
});

describe('FaultRegistry', () => {
  it('applies the first matching fault, honours method and removes it after `times`', () => {
    const registry = new FaultRegistry();
    registry.add({ method: 'POST', path: '/api/**', status: 500, times: 2 });
    registry.add({ path: '/api/**', status: 503 });
    expect(registry.take('GET', '/api/x')?.status).toBe(503);
    expect(registry.take('POST', '/api/x')?.status).toBe(500);
    expect(registry.take('POST', '/api/x')?.status).toBe(500);
    expect(registry.take('POST', '/api/x')?.status).toBe(503);
    expect(registry.size).toBe(1);
  });
});

describe('faultSpecSchema: applyDelayMs', () => {
  const path = '/api/payments/*/installments/create';
  const issues = (input: unknown) =>
    faultSpecSchema.safeParse(input).error?.issues.map((issue) => issue.path.join('.')) ?? [];

  it('takes an integer from 0 to the latency bound, beside a status', () => {
    for (const applyDelayMs of [0, 500, MAX_FAULT_DELAY_MS]) {
      expect(faultSpecSchema.parse({ path, status: 504, applyDelayMs }).applyDelayMs).toBe(
        applyDelayMs,
      );
    }
    // with a latency: wait, answer, then apply later
    expect(
      faultSpecSchema.safeParse({ path, status: 502, latencyMs: 100, applyDelayMs: 50 }).success,
    ).toBe(true);
  });

  it('refuses a negative, fractional or too long delay', () => {
    for (const applyDelayMs of [-1, 1.5, MAX_FAULT_DELAY_MS + 1, '500']) {
      expect(issues({ path, status: 504, applyDelayMs })).toContain('applyDelayMs');
    }
  });

  it('refuses it without status, or with reset or afterProcessing, naming the field', () => {
    const missing = faultSpecSchema.safeParse({ path, latencyMs: 10, applyDelayMs: 500 });
    expect(missing.error?.issues).toEqual([
      expect.objectContaining({
        path: ['applyDelayMs'],
        message: expect.stringContaining('needs status'),
      }),
    ]);
    expect(issues({ path, applyDelayMs: 500 })).toEqual(['status', 'applyDelayMs']);
    expect(issues({ path, status: 504, reset: true, applyDelayMs: 500 })).toEqual(['applyDelayMs']);
    expect(issues({ path, status: 504, afterProcessing: true, applyDelayMs: 500 })).toEqual([
      'applyDelayMs',
    ]);
  });

  it('is kept on the registered fault', () => {
    const registry = new FaultRegistry();
    registry.add(faultSpecSchema.parse({ method: 'post', path, status: 504, applyDelayMs: 500 }));
    expect(registry.take('POST', '/api/payments/p1/installments/create')).toMatchObject({
      status: 504,
      applyDelayMs: 500,
    });
  });
});
