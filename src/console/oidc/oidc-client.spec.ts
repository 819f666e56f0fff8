import { describe, expect, it } from '@jest/globals';
import type { OidcSignInFailed } from '../access/console.errors.js';
import { claimAt, displayNameOf, identityOf, roleOf } from './oidc-client.js';
import { PendingSignIns } from './pending-sign-ins.js';
import { callbackQuery } from './oidc.controller.js';

describe('roleOf', () => {
  it('gives operator over viewer, from a list or a string of roles, and nothing else', () => {
    expect(roleOf(['viewer', 'operator'])).toBe('operator');
    expect(roleOf(['viewer', 'finance'])).toBe('viewer');
    expect(roleOf('finance operator')).toBe('operator');
    expect(roleOf('viewer,finance')).toBe('viewer');
    expect(roleOf(['Operator', 'admin'])).toBeUndefined();
    expect(roleOf([])).toBeUndefined();
    expect(roleOf(undefined)).toBeUndefined();
    expect(roleOf({ operator: true })).toBeUndefined();
  });
});

describe('claimAt', () => {
  it('reads a claim by its name, or by a dotted path into nested claims', () => {
    expect(claimAt({ roles: ['viewer'] }, 'roles')).toEqual(['viewer']);
    expect(claimAt({ 'urn:roles': ['viewer'] }, 'urn:roles')).toEqual(['viewer']);
    expect(claimAt({ realm_access: { roles: ['operator'] } }, 'realm_access.roles')).toEqual([
      'operator',
    ]);
    expect(claimAt({ realm_access: 'x' }, 'realm_access.roles')).toBeUndefined();
  });
});

describe('identityOf', () => {
  it('names the person by the provider: subject and display name, verified', () => {
    expect(identityOf({ sub: 's-1', name: 'Kari Nordmann', roles: ['viewer'] }, 'roles')).toEqual({
      operator: 'Kari Nordmann',
      subject: 's-1',
      verified: true,
      role: 'viewer',
    });
  });

  it('never takes an e-mail address for the name, nor a control character', () => {
    expect(displayNameOf({ name: 'kari@example.com' }, 's-1')).toBe('s-1');
    expect(displayNameOf({}, 's-1')).toBe('s-1');
    expect(displayNameOf({ name: 'Kari\u0007 ' }, 's-1')).toBe('Kari');
  });

  it('refuses a person without a role, naming whom for the audit', () => {
    let failure: OidcSignInFailed | undefined;
    try {
      identityOf({ sub: 's-2', name: 'Nils', roles: ['finance'] }, 'roles');
    } catch (error) {
      failure = error as OidcSignInFailed;
    }
    expect(failure).toMatchObject({
      code: 'CONSOLE.OIDC_SIGN_IN_FAILED',
      reason: 'no_role',
      status: 403,
      identity: { subject: 's-2', name: 'Nils' },
    });
  });
});

describe('callbackQuery', () => {
  it('takes a code with its state, or the provider’s error, and nothing else', () => {
    expect(callbackQuery.safeParse({ code: 'c', state: 's', iss: 'x' }).success).toBe(true);
    expect(callbackQuery.safeParse({ error: 'access_denied', state: 's' }).success).toBe(true);
    expect(callbackQuery.safeParse({ code: 'c' }).success).toBe(false);
    expect(callbackQuery.safeParse({ code: ['c', 'd'], state: 's' }).success).toBe(false);
    expect(callbackQuery.safeParse({}).success).toBe(false);
  });
});

describe('PendingSignIns', () => {
  const challenge = { state: 's', nonce: 'n', codeVerifier: 'v', redirectUri: 'https://x/cb' };

  it('gives a started sign-in back once, and not after its time', () => {
    let now = 0;
    const pending = new PendingSignIns(10_000, () => now);
    const id = pending.add(challenge, '/console/search');
    expect(pending.take('another-id')).toBeUndefined();
    expect(pending.take(id)).toMatchObject({ challenge, next: '/console/search' });
    expect(pending.take(id)).toBeUndefined();
    const late = pending.add(challenge, '/console');
    now = 10_000;
    expect(pending.take(late)).toBeUndefined();
    expect(pending.take('')).toBeUndefined();
  });
});
