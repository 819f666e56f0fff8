import { describe, expect, it } from '@jest/globals';
import { loadCliConfig, loadCliPayflowConfig } from '../cli/cli.config.js';
import { loadConfig } from './app-config.js';
import { isClearTextToRemote, isLoopbackHost } from './transport-security.js';

const required = {
  PAYFLOW_BASE_URL: 'http://127.0.0.1:4010',
  PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:4010/partner',
  PAYFLOW_CLIENT_ID: 'sandbox-client',
  PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
  WEBHOOK_PUBLIC_BASE_URL: 'https://bridge.example.com/',
};
const oauth = {
  KAFKA_SASL_MECHANISM: 'oauthbearer',
  KAFKA_SASL_OAUTHBEARER_TOKEN_URL: 'https://idp.example.com/token',
  KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'bridge',
  KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: 'oauth-secret',
};
const plain = {
  KAFKA_SASL_MECHANISM: 'plain',
  KAFKA_SASL_USERNAME: 'worker',
  KAFKA_SASL_PASSWORD: 'kafka-pass',
};
const CLEAR_URL =
  'must be an https:// URL: plain http:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost)';
const CONSOLE_TOKEN = 'a-console-token-of-some-length';

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return 'accepted';
}

describe('loopback hosts', () => {
  it.each(['127.0.0.1', '127.8.9.10', 'localhost', 'LOCALHOST', 'api.localhost', '::1', '[::1]'])(
    '%s is loopback',
    (host) => expect(isLoopbackHost(host)).toBe(true),
  );

  it.each(['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'sandbox', 'localhost.example.com', '::2'])(
    '%s is not',
    (host) => expect(isLoopbackHost(host)).toBe(false),
  );

  it('finds plain http to another machine only', () => {
    expect(isClearTextToRemote('http://payflow.example.com/api')).toBe(true);
    expect(isClearTextToRemote('http://[::1]:4010')).toBe(false);
    expect(isClearTextToRemote('https://payflow.example.com')).toBe(false);
  });
});

describe('nothing in clear: URLs', () => {
  it.each([
    'PAYFLOW_BASE_URL',
    'PAYFLOW_PARTNER_BASE_URL',
    'PAYFLOW_TOKEN_URL',
    'KAFKA_SASL_OAUTHBEARER_TOKEN_URL',
  ])('refuses http:// to a host that is not loopback in %s, in one line', (name) => {
    const env = {
      ...required,
      ...(name === 'KAFKA_SASL_OAUTHBEARER_TOKEN_URL' ? { ...oauth, KAFKA_SSL: 'true' } : {}),
      [name]: 'http://payflow.example.com/x',
    };
    const message = refusal(env);
    expect(message).toBe(`Invalid configuration: ${name} ${CLEAR_URL}`);
    expect(message).not.toContain('payflow.example.com');
  });

  it('accepts https anywhere and http to loopback (the sandbox of the demo and the tests)', () => {
    const config = loadConfig({
      ...required,
      ...oauth,
      KAFKA_SSL: 'true',
      PAYFLOW_BASE_URL: 'http://localhost:4010',
      PAYFLOW_PARTNER_BASE_URL: 'http://[::1]:4010/partner',
      PAYFLOW_TOKEN_URL: 'https://auth.payflow.example.com/token',
      KAFKA_SASL_OAUTHBEARER_TOKEN_URL: 'http://127.0.0.2:8080/token',
    });
    expect(config.PAYFLOW_BASE_URL).toBe('http://localhost:4010');
    expect(config.KAFKA_SASL_OAUTHBEARER_TOKEN_URL).toBe('http://127.0.0.2:8080/token');
  });

  it('applies to the CLI too', () => {
    const cli = loadCliConfig({ ...required, PAYFLOW_BASE_URL: 'http://10.1.2.3' });
    expect(() => loadCliPayflowConfig(cli)).toThrow(
      `Invalid configuration: PAYFLOW_BASE_URL ${CLEAR_URL}`,
    );
  });
});

describe('nothing in clear: Kafka SASL', () => {
  it('refuses SASL PLAIN without KAFKA_SSL', () => {
    expect(refusal({ ...required, ...plain })).toBe(
      'Invalid configuration: KAFKA_SASL_MECHANISM is plain, which sends the password in clear ' +
        'without TLS: set KAFKA_SSL=true (or use scram-sha-256 or scram-sha-512)',
    );
    expect(refusal({ ...required, ...plain, KAFKA_SSL: 'false' })).toContain(
      'KAFKA_SASL_MECHANISM is plain',
    );
  });

  it('refuses SASL OAUTHBEARER without KAFKA_SSL', () => {
    expect(refusal({ ...required, ...oauth })).toBe(
      'Invalid configuration: KAFKA_SASL_MECHANISM is oauthbearer, which sends a bearer token in ' +
        'clear without TLS: set KAFKA_SSL=true (or use scram-sha-256 or scram-sha-512)',
    );
  });

  it('accepts them over TLS, and SCRAM (which never sends the password) without', () => {
    expect(loadConfig({ ...required, ...plain, KAFKA_SSL: 'true' }).KAFKA_SASL_MECHANISM).toBe(
      'plain',
    );
    expect(loadConfig({ ...required, ...oauth, KAFKA_SSL: 'true' }).KAFKA_SASL_MECHANISM).toBe(
      'oauthbearer',
    );
    expect(
      loadConfig({ ...required, ...plain, KAFKA_SASL_MECHANISM: 'scram-sha-512' })
        .KAFKA_SASL_MECHANISM,
    ).toBe('scram-sha-512');
  });

  it('applies to the CLI too', () => {
    expect(() => loadCliConfig({ ...plain })).toThrow(
      'Invalid configuration: KAFKA_SASL_MECHANISM is plain',
    );
  });
});

describe('the management port and the console', () => {
  it('takes MANAGEMENT_TLS_CERT_FILE and MANAGEMENT_TLS_KEY_FILE together or not at all', () => {
    expect(refusal({ ...required, MANAGEMENT_TLS_CERT_FILE: '/tls/cert.pem' })).toBe(
      'Invalid configuration: MANAGEMENT_TLS_KEY_FILE must be set together with its pair ' +
        '(MANAGEMENT_TLS_CERT_FILE and MANAGEMENT_TLS_KEY_FILE)',
    );
    expect(refusal({ ...required, MANAGEMENT_TLS_KEY_FILE: '/tls/key.pem' })).toContain(
      'MANAGEMENT_TLS_CERT_FILE must be set together with its pair',
    );
    const config = loadConfig({
      ...required,
      MANAGEMENT_TLS_CERT_FILE: '/tls/cert.pem',
      MANAGEMENT_TLS_KEY_FILE: '/tls/key.pem',
    });
    expect(config.MANAGEMENT_TLS_CERT_FILE).toBe('/tls/cert.pem');
    expect(config.CONSOLE_BEHIND_TLS_PROXY).toBe(false);
  });

  it('refuses the console on plain HTTP bound to an address that is not loopback', () => {
    for (const host of [undefined, '0.0.0.0', '::', '10.0.0.5']) {
      const message = refusal({
        ...required,
        CONSOLE_TOKEN,
        ...(host === undefined ? {} : { MANAGEMENT_HOST: host }),
      });
      expect(message).toBe(
        'Invalid configuration: MANAGEMENT_HOST is not loopback and the management port is plain ' +
          'HTTP: the console refuses to start (set MANAGEMENT_TLS_CERT_FILE and ' +
          'MANAGEMENT_TLS_KEY_FILE, or CONSOLE_BEHIND_TLS_PROXY=true behind a TLS proxy)',
      );
      expect(message).not.toContain(CONSOLE_TOKEN);
    }
  });

  it('refuses it when the console signs in through OpenID only', () => {
    expect(
      refusal({
        ...required,
        CONSOLE_OIDC_ISSUER: 'https://idp.example.com',
        CONSOLE_OIDC_CLIENT_ID: 'console',
        CONSOLE_OIDC_CLIENT_SECRET: 'oidc-secret',
      }),
    ).toContain('the console refuses to start');
  });

  it('allows the console on loopback, over its own TLS, or behind a TLS proxy', () => {
    const accepted = [
      { MANAGEMENT_HOST: '127.0.0.1' },
      { MANAGEMENT_HOST: '::1' },
      { MANAGEMENT_HOST: 'localhost' },
      { MANAGEMENT_TLS_CERT_FILE: '/tls/cert.pem', MANAGEMENT_TLS_KEY_FILE: '/tls/key.pem' },
      { CONSOLE_BEHIND_TLS_PROXY: 'true' },
    ];
    for (const extra of accepted) {
      expect(loadConfig({ ...required, CONSOLE_TOKEN, ...extra }).CONSOLE_TOKEN).toBe(
        CONSOLE_TOKEN,
      );
    }
    expect(loadConfig({ ...required, CONSOLE_TOKEN, CONSOLE_BEHIND_TLS_PROXY: 'true' })).toEqual(
      expect.objectContaining({ CONSOLE_BEHIND_TLS_PROXY: true }),
    );
  });

  it('leaves plain HTTP on any address alone when the console is off (health and metrics)', () => {
    expect(loadConfig({ ...required, MANAGEMENT_HOST: '0.0.0.0' }).MANAGEMENT_HOST).toBe('0.0.0.0');
  });
});
