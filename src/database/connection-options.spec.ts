import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../config/app-config.js';
import { postgresConnection, type DatabaseConnectionConfig } from './connection-options.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const files: Record<string, string> = { '/etc/pg/ca.pem': CA, '/etc/pg/empty.pem': 'hello' };
const readFile = (path: string): string => {
  const content = files[path];
  if (content === undefined) throw Object.assign(new Error(`ENOENT ${path}`), { code: 'ENOENT' });
  return content;
};

function connect(url: string, more: Partial<DatabaseConnectionConfig> = {}) {
  return postgresConnection(
    { DATABASE_URL: url, DATABASE_SSL_CA_FILE: undefined, ...more },
    readFile,
  );
}

function configErrorOf(work: () => unknown): ConfigError {
  try {
    work();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('no ConfigError');
}

const BASE = 'postgres://app:s3cr%40t@db.example.net:6432/payflow';

describe('postgresConnection', () => {
  it('takes host, port, user, database and password apart, and keeps no URL', () => {
    const connection = connect(`${BASE}?application_name=erp&options=-c%20search_path%3Dx`);
    expect(connection).toMatchObject({
      host: 'db.example.net',
      port: 6432,
      user: 'app',
      database: 'payflow',
      password: 's3cr@t',
      ssl: false,
      sslMode: undefined,
      customCa: false,
      parameters: { application_name: 'erp', options: '-c search_path=x' },
    });
    expect(JSON.stringify(connection)).not.toMatch(/s3cr|postgres:\/\//);
  });

  it('keeps no TLS without sslmode (as the bridge always did) and with disable', () => {
    expect(connect(BASE).ssl).toBe(false);
    expect(connect(`${BASE}?sslmode=disable`)).toMatchObject({ ssl: false, sslMode: 'disable' });
  });

  it('require without a CA encrypts only, as libpq does (node-postgres would verify)', () => {
    const { ssl, sslMode } = connect(`${BASE}?sslmode=require`);
    expect(sslMode).toBe('require');
    expect(ssl).toEqual({ rejectUnauthorized: false });
  });

  it('require with DATABASE_SSL_CA_FILE behaves as verify-ca (libpq with a root CA)', () => {
    const { ssl, customCa } = connect(`${BASE}?sslmode=require`, {
      DATABASE_SSL_CA_FILE: '/etc/pg/ca.pem',
    });
    expect(customCa).toBe(true);
    expect(ssl).toMatchObject({ ca: CA, rejectUnauthorized: true });
    expect(ssl !== false && ssl.checkServerIdentity?.('other.host', {} as never)).toBeUndefined();
  });

  it('verify-ca verifies the chain (the CA file, else the system CAs), not the host name', () => {
    const withCa = connect(`${BASE}?sslmode=verify-ca`, { DATABASE_SSL_CA_FILE: '/etc/pg/ca.pem' });
    expect(withCa.ssl).toMatchObject({ ca: CA, rejectUnauthorized: true });
    expect(withCa.ssl !== false && typeof withCa.ssl.checkServerIdentity).toBe('function');
    const system = connect(`${BASE}?sslmode=verify-ca`).ssl;
    expect(system).toMatchObject({ rejectUnauthorized: true });
    expect(system !== false && 'ca' in system).toBe(false);
  });

  it("verify-full verifies the chain and leaves Node's host name check in place", () => {
    const { ssl } = connect(`${BASE}?sslmode=verify-full`, {
      DATABASE_SSL_CA_FILE: '/etc/pg/ca.pem',
    });
    expect(ssl).toEqual({ ca: CA, rejectUnauthorized: true });
    expect(connect(`${BASE}?sslmode=verify-full`).ssl).toEqual({ rejectUnauthorized: true });
  });

  it('hands pg no sslmode (nor any other TLS parameter) to read on its own', () => {
    const { parameters } = connect(`${BASE}?sslmode=verify-full&application_name=x`);
    expect(parameters).toEqual({ application_name: 'x' });
  });

  it('DATABASE_PASSWORD overrides the password of the URL, and is not enumerable', () => {
    const connection = connect(`${BASE}?sslmode=require`, { DATABASE_PASSWORD: 'from-env' });
    expect(connection.password).toBe('from-env');
    expect(Object.keys(connection)).not.toContain('password');
    expect(connect('postgres://app@h/db').password).toBeUndefined();
  });

  it('reads host, port, user and password query parameters as pg does', () => {
    const connection = connect(
      'postgres://app@/payflow?host=%2Frun%2Fpostgresql&port=5433&user=other&password=p',
    );
    expect(connection).toMatchObject({
      host: '/run/postgresql',
      port: 5433,
      user: 'other',
      password: 'p',
      database: 'payflow',
      parameters: {},
    });
    expect(connect('postgresql://[::1]:5432/db').host).toBe('::1');
    expect(connect('postgres:///db')).toMatchObject({ host: undefined, port: undefined });
  });

  it.each(['prefer', 'allow'])('refuses sslmode=%s in one line', (mode) => {
    const error = configErrorOf(() => connect(`${BASE}?sslmode=${mode}`));
    expect(error.message).toBe(
      `Invalid configuration: DATABASE_URL sslmode=${mode} is not supported: it falls back between ` +
        'TLS and no TLS without saying so; use disable, require, verify-ca or verify-full',
    );
  });

  it("names DATABASE_URL's sslmode when it is not one of libpq's", () => {
    const error = configErrorOf(() => connect(`${BASE}?sslmode=verify`));
    expect(error.message).toBe(
      'Invalid configuration: DATABASE_URL sslmode must be disable, require, verify-ca or verify-full',
    );
    expect(error.code).toBe('CONFIG.INVALID');
  });

  it.each([
    'sslrootcert=/ca.pem',
    'sslcert=/c.pem',
    'sslkey=/k.pem',
    'ssl=true',
    'uselibpqcompat=true',
  ])('refuses %s rather than ignore it (or let pg read it)', (parameter) => {
    const error = configErrorOf(() => connect(`${BASE}?sslmode=require&${parameter}`));
    expect(error.message).toMatch(
      /^Invalid configuration: DATABASE_URL has \w+, which is not read/,
    );
    expect(error.message).not.toContain('s3cr');
  });

  it('refuses a CA file without TLS, an unreadable one and one without a certificate', () => {
    expect(
      configErrorOf(() => connect(BASE, { DATABASE_SSL_CA_FILE: '/etc/pg/ca.pem' })).message,
    ).toMatch(
      /^Invalid configuration: DATABASE_SSL_CA_FILE is set but DATABASE_URL's sslmode is not set/,
    );
    expect(
      configErrorOf(() =>
        connect(`${BASE}?sslmode=disable`, { DATABASE_SSL_CA_FILE: '/etc/pg/ca.pem' }),
      ).message,
    ).toContain('sslmode is disable');
    expect(
      configErrorOf(() =>
        connect(`${BASE}?sslmode=verify-full`, { DATABASE_SSL_CA_FILE: '/etc/pg/none.pem' }),
      ).message,
    ).toBe('Invalid configuration: DATABASE_SSL_CA_FILE names a file that cannot be read (ENOENT)');
    expect(
      configErrorOf(() =>
        connect(`${BASE}?sslmode=verify-full`, { DATABASE_SSL_CA_FILE: '/etc/pg/empty.pem' }),
      ).message,
    ).toBe('Invalid configuration: DATABASE_SSL_CA_FILE holds no PEM certificate');
  });

  it('says an unparsable URL or port is invalid without echoing it', () => {
    const bad = configErrorOf(() => connect('postgres://app:s3cr@t@[bad/db'));
    expect(bad.message).toBe('Invalid configuration: DATABASE_URL is not a valid URL');
    const port = configErrorOf(() => connect('postgres://app:s3cr@h/db?port=99999'));
    expect(port.message).toBe('Invalid configuration: DATABASE_URL has an invalid port');
  });
});
