import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadConfig, loadDatabaseConfig, secretFromFileContent } from './app-config.js';

const required = {
  PAYFLOW_BASE_URL: 'http://127.0.0.1:4010',
  PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:4010/partner',
  PAYFLOW_CLIENT_ID: 'sandbox-client',
  WEBHOOK_PUBLIC_BASE_URL: 'https://bridge.example.com/',
};
const withSecret = { ...required, PAYFLOW_CLIENT_SECRET: 'sandbox-secret' };

const dir = mkdtempSync(join(tmpdir(), 'pfb-secrets-'));
function secretFile(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

describe('secrets from files (<NAME>_FILE)', () => {
  it('removes exactly one trailing newline, LF or CRLF', () => {
    expect(secretFromFileContent('s3cret\n')).toBe('s3cret');
    expect(secretFromFileContent('s3cret\r\n')).toBe('s3cret');
    expect(secretFromFileContent('s3cret\n\n')).toBe('s3cret\n');
    expect(secretFromFileContent(' s3cret ')).toBe(' s3cret ');
  });

  it('reads every listed secret from its file and keeps the client secret file for rotation', () => {
    const config = loadConfig({
      ...required,
      PAYFLOW_CLIENT_SECRET_FILE: secretFile('payflow', 'from-file\n'),
      DATABASE_PASSWORD_FILE: secretFile('db', 'db-pass\n'),
      CONSOLE_TOKEN_FILE: secretFile('console', 'a-console-token-of-some-length\n'),
      // The console on plain HTTP: loopback only (transport-security.spec.ts).
      MANAGEMENT_HOST: '127.0.0.1',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'worker',
      KAFKA_SASL_PASSWORD_FILE: secretFile('kafka', 'kafka-pass'),
    });
    expect(config.PAYFLOW_CLIENT_SECRET).toBe('from-file');
    expect(config.PAYFLOW_CLIENT_SECRET_FILE).toBe(join(dir, 'payflow'));
    expect(config.DATABASE_PASSWORD).toBe('db-pass');
    expect(config.CONSOLE_TOKEN).toBe('a-console-token-of-some-length');
    expect(config.KAFKA_SASL_PASSWORD).toBe('kafka-pass');
    const oauth = loadConfig({
      ...required,
      KAFKA_SSL: 'true',
      KAFKA_SASL_MECHANISM: 'oauthbearer',
      KAFKA_SASL_OAUTHBEARER_TOKEN_URL: 'https://idp.example.com/token',
      KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'bridge',
      KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE: secretFile('oauth', 'oauth-secret\n'),
      PAYFLOW_CLIENT_SECRET: 'x',
    });
    expect(oauth.KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET).toBe('oauth-secret');
    // Kept, so that each token request reads a rotated secret (kafka-oauthbearer.ts).
    expect(oauth.KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE).toBe(join(dir, 'oauth'));
  });

  it('refuses a secret set both ways, naming both variables', () => {
    expect(() =>
      loadConfig({
        ...withSecret,
        PAYFLOW_CLIENT_SECRET_FILE: secretFile('both', 'other\n'),
      }),
    ).toThrow(
      'Invalid configuration: PAYFLOW_CLIENT_SECRET and PAYFLOW_CLIENT_SECRET_FILE are both set',
    );
  });

  it('names the variable of an unreadable or empty file, never a content', () => {
    expect(() =>
      loadConfig({ ...required, PAYFLOW_CLIENT_SECRET_FILE: join(dir, 'missing') }),
    ).toThrow(
      'Invalid configuration: PAYFLOW_CLIENT_SECRET_FILE names a file that cannot be read (ENOENT)',
    );
    expect(() =>
      loadConfig({ ...required, PAYFLOW_CLIENT_SECRET_FILE: secretFile('empty', '\n') }),
    ).toThrow('Invalid configuration: PAYFLOW_CLIENT_SECRET_FILE names an empty file');
  });

  it('serves the database tools the same way', () => {
    const file = secretFile('db2', 'pw\n');
    expect(loadDatabaseConfig({ DATABASE_PASSWORD_FILE: file }).DATABASE_PASSWORD).toBe('pw');
    expect(() =>
      loadDatabaseConfig({ DATABASE_PASSWORD: 'a', DATABASE_PASSWORD_FILE: file }),
    ).toThrow('DATABASE_PASSWORD and DATABASE_PASSWORD_FILE are both set');
  });
});

describe('Kafka security variables', () => {
  const sasl = { KAFKA_SASL_USERNAME: 'worker', KAFKA_SASL_PASSWORD: 'pw' };
  it.each([
    [{ KAFKA_SSL_CA_FILE: '/ca.pem' }, 'KAFKA_SSL_CA_FILE is set but KAFKA_SSL is not true'],
    [
      { KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: '/c.pem' },
      'KAFKA_SSL_KEY_FILE must be set together with its pair',
    ],
    [
      { KAFKA_SSL: 'true', KAFKA_SSL_KEY_FILE: '/k.pem' },
      'KAFKA_SSL_CERT_FILE must be set together with its pair',
    ],
    [
      { KAFKA_SASL_MECHANISM: 'gssapi' },
      'KAFKA_SASL_MECHANISM must be plain, scram-sha-256, scram-sha-512 or oauthbearer',
    ],
    [
      { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'worker' },
      'KAFKA_SASL_PASSWORD is required with KAFKA_SASL_MECHANISM=scram-sha-512',
    ],
    [
      { KAFKA_SASL_MECHANISM: 'oauthbearer' },
      'KAFKA_SASL_OAUTHBEARER_TOKEN_URL is required with KAFKA_SASL_MECHANISM=oauthbearer',
    ],
    [sasl, 'KAFKA_SASL_USERNAME is set but KAFKA_SASL_MECHANISM is not'],
    [
      {
        KAFKA_SASL_MECHANISM: 'oauthbearer',
        KAFKA_SASL_OAUTHBEARER_TOKEN_URL: 'https://idp.example.com/token',
        KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'bridge',
        KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: 's',
        ...sasl,
      },
      'KAFKA_SASL_USERNAME is not used with KAFKA_SASL_MECHANISM=oauthbearer',
    ],
  ])('refuses %j', (variables, message) => {
    expect(() => loadConfig({ ...withSecret, ...variables })).toThrow(
      `Invalid configuration: ${message}`,
    );
  });

  it('accepts TLS with mutual TLS and SCRAM together, and defaults to none', () => {
    const config = loadConfig({
      ...withSecret,
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: '/ca.pem',
      KAFKA_SSL_CERT_FILE: '/c.pem',
      KAFKA_SSL_KEY_FILE: '/k.pem',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      ...sasl,
    });
    expect(config.KAFKA_SSL).toBe(true);
    expect(config.KAFKA_SASL_MECHANISM).toBe('scram-sha-512');
    const plain = loadConfig(withSecret);
    expect(plain.KAFKA_SSL).toBe(false);
    expect(plain.KAFKA_SASL_MECHANISM).toBeUndefined();
    expect(plain.MANAGEMENT_PORT).toBe(9464);
    expect(plain.MANAGEMENT_HOST).toBe('0.0.0.0');
    expect(plain.CONSOLE_TOKEN).toBeUndefined();
  });
});
