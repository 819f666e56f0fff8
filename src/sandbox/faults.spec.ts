import { describe, expect, it } from '@jest/globals';
import { FaultRegistry, compilePathPattern } from './faults.js';

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
