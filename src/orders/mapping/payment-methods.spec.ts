import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { MappingFailedError } from '../../errors/dead-letter.errors.js';
import type { CallOptions, PayflowApi, PaymentMethod } from '../../payflow/payflow.types.js';
import { PaymentMethodCatalog } from './payment-methods.js';

const method = (id: string): PaymentMethod => ({ id, name: id, type: 'terminal' });

function fakePayflow(lists: PaymentMethod[][]) {
  const calls: CallOptions[] = [];
  let index = 0;
  const api = {
    listPaymentMethods: (options: CallOptions = {}) => {
      calls.push(options);
      const list = lists[Math.min(index, lists.length - 1)] ?? [];
      index += 1;
      return Promise.resolve(list);
    },
  } as unknown as PayflowApi;
  return { api, calls };
}

describe('PaymentMethodCatalog', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('accepts the default method without asking Payflow', async () => {
    const { api, calls } = fakePayflow([[]]);
    const catalog = new PaymentMethodCatalog(api, { paymentMethodsTtlMs: 60_000 });
    await catalog.assertKnown('000000000000000000000000', null);
    expect(calls).toHaveLength(0);
  });

  it('caches the list per organization for the TTL', async () => {
    const { api, calls } = fakePayflow([[method('m1')]]);
    const catalog = new PaymentMethodCatalog(api, { paymentMethodsTtlMs: 60_000 });
    await catalog.assertKnown('m1', 'org-1');
    await catalog.assertKnown('m1', 'org-1');
    expect(calls).toEqual([{ organizationId: 'org-1' }]);
    await catalog.assertKnown('m1', 'org-2');
    expect(calls).toHaveLength(2);
    jest.advanceTimersByTime(60_001);
    await catalog.assertKnown('m1', 'org-1');
    expect(calls).toHaveLength(3);
  });

  it('refetches once on a miss and names an unknown method', async () => {
    const { api, calls } = fakePayflow([[method('m1')], [method('m1'), method('m2')]]);
    const catalog = new PaymentMethodCatalog(api, { paymentMethodsTtlMs: 60_000 });
    await catalog.assertKnown('m1', null);
    jest.advanceTimersByTime(2_000);
    await catalog.assertKnown('m2', null); // a miss: fetched again, found
    expect(calls).toHaveLength(2);
    jest.advanceTimersByTime(2_000);
    const error = await catalog.assertKnown('m9', null).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(MappingFailedError);
    expect((error as MappingFailedError).code).toBe('ORDER.UNKNOWN_PAYMENT_METHOD');
    expect((error as Error).message).toContain('"m9"');
    expect(calls).toHaveLength(3);
    // Right after a fetch a miss does not fetch again.
    await expect(catalog.assertKnown('m9', null)).rejects.toThrow(MappingFailedError);
    expect(calls).toHaveLength(3);
  });

  it('fetches once for concurrent callers', async () => {
    const { api, calls } = fakePayflow([[method('m1')]]);
    const catalog = new PaymentMethodCatalog(api, { paymentMethodsTtlMs: 60_000 });
    await Promise.all([1, 2, 3, 4].map(() => catalog.assertKnown('m1', null)));
    expect(calls).toHaveLength(1);
  });
});
