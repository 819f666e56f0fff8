import { describe, expect, it } from '@jest/globals';
import { ConsoleToken, sameSecret } from './console-token.js';
import { SessionStore } from './session-store.js';
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

describe('SessionStore', () => {
  it('ends a session after its idle time, and after its longest life however busy', () => {
    let now = 0;
    const store = new SessionStore({ idleMs: 1_000, maxMs: 5_000 }, () => now);
    const { id, session } = store.open('Kari');
    expect(session.operator).toBe('Kari');
    expect(session.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(id).not.toBe(session.csrfToken);
    for (now = 900; now < 5_000; now += 900) expect(store.touch(id)).toBe(session);
    now = 5_000;
    expect(store.touch(id)).toBeUndefined();

    const idle = store.open('Ola');
    now += 1_000;
    expect(store.touch(idle.id)).toBeUndefined();
    expect(store.touch('not-a-session')).toBeUndefined();
    expect(store.touch(undefined)).toBeUndefined();
  });

  it('forgets a session at sign-out, and ended ones at the next sign-in', () => {
    let now = 0;
    const store = new SessionStore({ idleMs: 1_000, maxMs: 5_000 }, () => now);
    const first = store.open('a');
    store.close(first.id);
    expect(store.touch(first.id)).toBeUndefined();
    store.open('b');
    now = 2_000;
    store.open('c');
    expect(store.size).toBe(1);
  });
});

describe('SignInThrottle', () => {
  it('makes a client wait after five wrong tokens within a minute, until the oldest ages out', () => {
    let now = 0;
    const throttle = new SignInThrottle(5, 60_000, () => now);
    for (let i = 0; i < 5; i += 1) {
      expect(throttle.waitFor('198.51.100.7')).toBe(0);
      throttle.failed('198.51.100.7');
      now += 1_000;
    }
    expect(throttle.waitFor('198.51.100.7')).toBe(55_000);
    // The same client through its IPv4-mapped address; another client is not affected.
    expect(throttle.waitFor('::ffff:198.51.100.7')).toBe(55_000);
    expect(throttle.waitFor('198.51.100.8')).toBe(0);
    now = 60_001;
    expect(throttle.waitFor('198.51.100.7')).toBe(0);
  });
});

describe('operatorName', () => {
  it('keeps a name without control characters, and refuses an empty or too long one', () => {
    expect(operatorName('  Kari Nordmann\n')).toBe('Kari Nordmann');
    expect(operatorName('\u0007')).toBe('');
    expect(operatorName('x'.repeat(81))).toBe('');
  });
});
