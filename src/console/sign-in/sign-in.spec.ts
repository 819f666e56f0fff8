import { describe, expect, it } from '@jest/globals';
import { ConsoleToken, sameSecret } from './console-token.js';
import { SessionStore, type ConsoleIdentity } from './session-store.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { operatorName } from './sign-in.controller.js';

describe('ConsoleToken', () => {
  it('accepts the token only, whatever the length of a guess', () => {
    const token = new ConsoleToken('a-long-console-token-0123456789');
    expect(token.matches('a-long-console-token-0123456789')).toBe(true);
    expect(token.matches('a-long-console-token-012345678')).toBe(false);
    expect(token.matches('')).toBe(false);
    expect(token.matches('a-long-console-token-0123456789 ')).toBe(false);
    expect(sameSecret('x', 'x')).toBe(true);
    expect(sameSecret('x', 'y')).toBe(false);
  });
});

/** A token sign-in's identity: the typed name, unverified, operator. */
const typed = (operator: string): ConsoleIdentity => ({
  operator,
  subject: null,
  verified: false,
  role: 'operator',
});

describe('SessionStore', () => {
  it('ends a session after its idle time, and after its longest life however busy', () => {
    let now = 0;
    const store = new SessionStore({ idleMs: 1_000, maxMs: 5_000 }, () => now);
    const { id, session } = store.open(typed('Kari'), '192.0.2.1');
    expect(session).toMatchObject({
      operator: 'Kari',
      subject: null,
      verified: false,
      role: 'operator',
      clientAddress: '192.0.2.1',
    });
    expect(session.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(id).not.toBe(session.csrfToken);
    for (now = 900; now < 5_000; now += 900) expect(store.touch(id)).toBe(session);
    now = 5_000;
    expect(store.touch(id)).toBeUndefined();

    const idle = store.open(typed('Ola'), '192.0.2.1');
    now += 1_000;
    expect(store.touch(idle.id)).toBeUndefined();
    expect(store.touch('not-a-session')).toBeUndefined();
    expect(store.touch(undefined)).toBeUndefined();
  });

  it('forgets a session at sign-out, and ended ones at the next sign-in', () => {
    let now = 0;
    const store = new SessionStore({ idleMs: 1_000, maxMs: 5_000 }, () => now);
    const first = store.open(typed('a'), '192.0.2.1');
    store.close(first.id);
    expect(store.touch(first.id)).toBeUndefined();
    store.open(typed('b'), '192.0.2.1');
    now = 2_000;
    store.open(typed('c'), '192.0.2.1');
    expect(store.size).toBe(1);
  });
});

describe('SignInThrottle', () => {
  const limits = { perClient: 5, global: 12, windowMs: 60_000 };

  it('makes a client wait after five failures within a minute, until the oldest ages out', () => {
    let now = 0;
    const throttle = new SignInThrottle(limits, () => now);
    for (let i = 0; i < 5; i += 1) {
      expect(throttle.waitFor('198.51.100.7')).toBeUndefined();
      throttle.failed('198.51.100.7');
      now += 1_000;
    }
    expect(throttle.waitFor('198.51.100.7')).toEqual({ ms: 55_000, scope: 'client' });
    // The same client through its IPv4-mapped address; another client is not affected.
    expect(throttle.waitFor('::ffff:198.51.100.7')).toEqual({ ms: 55_000, scope: 'client' });
    expect(throttle.waitFor('198.51.100.8')).toBeUndefined();
    now = 60_001;
    expect(throttle.waitFor('198.51.100.7')).toBeUndefined();
  });

  it('makes everyone wait once all clients together failed `global` times in the window', () => {
    let now = 0;
    const throttle = new SignInThrottle(limits, () => now);
    // Twelve addresses, three failures each at most: none reaches its own limit of five.
    for (let i = 0; i < 12; i += 1) {
      expect(throttle.waitFor(`203.0.113.${i}`)).toBeUndefined();
      throttle.failed(`203.0.113.${i % 4}`);
      now += 1_000;
    }
    // Now a client that never failed waits too, as long as the oldest failure is in the window.
    expect(throttle.waitFor('192.0.2.77')).toEqual({ ms: 48_000, scope: 'everyone' });
    expect(throttle.waitFor('203.0.113.0')).toEqual({ ms: 48_000, scope: 'everyone' });
    now = 60_001;
    expect(throttle.waitFor('192.0.2.77')).toBeUndefined();
    // One client past its own limit and the global one: the longer wait is told.
    const both = new SignInThrottle({ perClient: 2, global: 3, windowMs: 60_000 }, () => now);
    both.failed('192.0.2.1');
    now += 10_000;
    both.failed('192.0.2.2');
    both.failed('192.0.2.2');
    expect(both.waitFor('192.0.2.2')).toEqual({ ms: 60_000, scope: 'client' });
    expect(both.waitFor('192.0.2.3')).toEqual({ ms: 50_000, scope: 'everyone' });
  });
});

describe('operatorName', () => {
  it('keeps a name without control characters, and refuses an empty or too long one', () => {
    expect(operatorName('  Kari Nordmann\n')).toBe('Kari Nordmann');
    expect(operatorName('\u0007')).toBe('');
    expect(operatorName('x'.repeat(81))).toBe('');
  });
});
