import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_TOKEN_LIFETIME_SECONDS,
  TokenCache,
  refreshMarginMs,
  tokenLifetimeSeconds,
  type FetchedToken,
} from './payflow.token.js';

describe('refreshMarginMs', () => {
  it('is 60 s, or half the lifetime when that is shorter', () => {
    expect(refreshMarginMs(3600)).toBe(60_000);
    expect(refreshMarginMs(120)).toBe(60_000);
    expect(refreshMarginMs(60)).toBe(30_000);
    expect(refreshMarginMs(2)).toBe(1000);
  });
});

describe('tokenLifetimeSeconds', () => {
  it('is expires_in, or 300 s when the answer has none (refreshed 60 s early)', () => {
    expect(tokenLifetimeSeconds(3600)).toBe(3600);
    expect(tokenLifetimeSeconds(undefined)).toBe(DEFAULT_TOKEN_LIFETIME_SECONDS);
    expect(DEFAULT_TOKEN_LIFETIME_SECONDS).toBe(300);
    expect(refreshMarginMs(DEFAULT_TOKEN_LIFETIME_SECONDS)).toBe(60_000);
  });
});

describe('TokenCache', () => {
  it('fetches once for many concurrent callers (single flight)', async () => {
    let fetches = 0;
    let answer!: (token: FetchedToken) => void;
    const pending = new Promise<FetchedToken>((resolve) => {
      answer = resolve;
    });
    const cache = new TokenCache(() => {
      fetches += 1;
      return pending;
    });
    const waiting = Array.from({ length: 100 }, () => cache.get());
    answer({ accessToken: 't1', expiresInSeconds: 3600 });
    const tokens = await Promise.all(waiting);
    expect(fetches).toBe(1);
    expect(cache.fetchCount).toBe(1);
    expect(new Set(tokens.map((token) => token.accessToken))).toEqual(new Set(['t1']));
  });

  it('serves the cached token until the refresh point, then fetches one new token', async () => {
    let now = 1_000_000;
    let n = 0;
    const cache = new TokenCache(
      () => Promise.resolve({ accessToken: `t${++n}`, expiresInSeconds: 3600 }),
      () => now,
    );
    const first = await cache.get();
    expect(first).toEqual({
      accessToken: 't1',
      expiresAt: 1_000_000 + 3_600_000,
      refreshAt: 1_000_000 + 3_540_000,
    });
    now += 3_539_999;
    expect((await cache.get()).accessToken).toBe('t1');
    now += 1;
    const [a, b] = await Promise.all([cache.get(), cache.get()]);
    expect(a.accessToken).toBe('t2');
    expect(b.accessToken).toBe('t2');
    expect(cache.fetchCount).toBe(2);
  });

  it('gives every waiter the failure, and the next call tries again', async () => {
    let n = 0;
    const cache = new TokenCache(() =>
      ++n === 1
        ? Promise.reject(new Error('down'))
        : Promise.resolve({ accessToken: 'ok', expiresInSeconds: 60 }),
    );
    const results = await Promise.allSettled([cache.get(), cache.get()]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect((await cache.get()).accessToken).toBe('ok');
    expect(n).toBe(2);
  });

  it('invalidate drops only the token that failed', async () => {
    let n = 0;
    const cache = new TokenCache(() =>
      Promise.resolve({ accessToken: `t${++n}`, expiresInSeconds: 3600 }),
    );
    await cache.get();
    cache.invalidate('t0');
    expect((await cache.get()).accessToken).toBe('t1');
    cache.invalidate('t1');
    expect((await cache.get()).accessToken).toBe('t2');
    cache.invalidate('t1');
    expect((await cache.get()).accessToken).toBe('t2');
  });
});
