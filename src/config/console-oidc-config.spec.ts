import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from './app-config.js';

const required = {
  PAYFLOW_BASE_URL: 'http://127.0.0.1:4010',
  PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:4010/partner',
  PAYFLOW_CLIENT_ID: 'sandbox-client',
  PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
  WEBHOOK_PUBLIC_BASE_URL: 'https://bridge.example.com/',
  MANAGEMENT_HOST: '127.0.0.1',
};
const oidc = {
  CONSOLE_OIDC_ISSUER: 'https://id.example.com/realms/dealers/',
  CONSOLE_OIDC_CLIENT_ID: 'payflow-bridge-console',
  CONSOLE_OIDC_CLIENT_SECRET: 'a-client-secret',
};

describe('the console’s OpenID provider (CONSOLE_OIDC_*)', () => {
  it('is read with the issuer kept exactly as given and the roles claim defaulting to roles', () => {
    const config = loadConfig({ ...required, ...oidc });
    expect(config.CONSOLE_OIDC_ISSUER).toBe('https://id.example.com/realms/dealers/');
    expect(config.CONSOLE_OIDC_CLIENT_ID).toBe('payflow-bridge-console');
    expect(config.CONSOLE_OIDC_CLIENT_SECRET).toBe('a-client-secret');
    expect(config.CONSOLE_OIDC_ROLES_CLAIM).toBe('roles');
    expect(
      loadConfig({ ...required, ...oidc, CONSOLE_OIDC_ROLES_CLAIM: 'realm_access.roles' })
        .CONSOLE_OIDC_ROLES_CLAIM,
    ).toBe('realm_access.roles');
  });

  it('reads the client secret from CONSOLE_OIDC_CLIENT_SECRET_FILE', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pfb-oidc-')), 'secret');
    writeFileSync(file, 'from-a-file\n');
    const { CONSOLE_OIDC_CLIENT_SECRET: _inline, ...rest } = oidc;
    const config = loadConfig({ ...required, ...rest, CONSOLE_OIDC_CLIENT_SECRET_FILE: file });
    expect(config.CONSOLE_OIDC_CLIENT_SECRET).toBe('from-a-file');
    expect(() =>
      loadConfig({ ...required, ...oidc, CONSOLE_OIDC_CLIENT_SECRET_FILE: file }),
    ).toThrow('CONSOLE_OIDC_CLIENT_SECRET and CONSOLE_OIDC_CLIENT_SECRET_FILE are both set');
  });

  it('wants the issuer, the client id and the secret together, naming the one missing', () => {
    const { CONSOLE_OIDC_CLIENT_ID: _id, ...withoutId } = oidc;
    expect(() => loadConfig({ ...required, ...withoutId })).toThrow(
      'Invalid configuration: CONSOLE_OIDC_CLIENT_ID is required with CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_SECRET (OpenID sign-in)',
    );
    expect(() =>
      loadConfig({ ...required, CONSOLE_OIDC_CLIENT_SECRET: 'a-client-secret' }),
    ).toThrow(/CONSOLE_OIDC_ISSUER is required/);
  });

  it('refuses an issuer over plain http:// unless it is on this machine', () => {
    expect(() =>
      loadConfig({ ...required, ...oidc, CONSOLE_OIDC_ISSUER: 'http://id.example.com' }),
    ).toThrow(/CONSOLE_OIDC_ISSUER must be an https:\/\/ URL/);
    expect(
      loadConfig({ ...required, ...oidc, CONSOLE_OIDC_ISSUER: 'http://localhost:8080' })
        .CONSOLE_OIDC_ISSUER,
    ).toBe('http://localhost:8080');
    expect(() =>
      loadConfig({ ...required, ...oidc, CONSOLE_OIDC_ISSUER: 'id.example.com' }),
    ).toThrow(/CONSOLE_OIDC_ISSUER/);
  });
});
