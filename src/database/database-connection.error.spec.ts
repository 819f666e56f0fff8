import { describe, expect, it } from '@jest/globals';
import { postgresConnection } from './connection-options.js';
import { connectionError, DatabaseConnectionError } from './database-connection.error.js';

const PASSWORD = 'Tr0ub4dor&3';

function connection(sslmode: string, ca = false) {
  return postgresConnection(
    {
      DATABASE_URL: `postgres://app@db.internal:5432/payflow${sslmode === '' ? '' : `?sslmode=${sslmode}`}`,
      DATABASE_SSL_CA_FILE: ca ? '/ca.pem' : undefined,
      DATABASE_PASSWORD: PASSWORD,
    },
    () => '-----BEGIN CERTIFICATE-----\n',
  );
}

/** What pg raises for a server's ErrorResponse. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

function nodeError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('connectionError', () => {
  it('says the server requires TLS when pg_hba refuses us without it', () => {
    const error = connectionError(
      serverError(
        '28000',
        'no pg_hba.conf entry for host "10.0.0.5", user "app", database "payflow", no encryption',
      ),
      connection('disable'),
    );
    expect(error).toBeInstanceOf(DatabaseConnectionError);
    expect(error.code).toBe('DATABASE.CONNECT_FAILED');
    expect(error.message).toBe(
      'cannot connect to Postgres at db.internal:5432: the server requires TLS (pg_hba has no ' +
        'non-TLS entry for us): set sslmode (require, verify-ca or verify-full) in DATABASE_URL',
    );
    expect(error.metadata).toEqual({
      failure: 'tls_required',
      host: 'db.internal',
      port: 5432,
      sslmode: 'disable',
    });
    expect(error.transient).toBe(false);
  });

  it('says pg_hba has no entry with TLS when we did use TLS', () => {
    const error = connectionError(
      serverError(
        '28000',
        'no pg_hba.conf entry for host "x", user "app", database "payflow", SSL encryption',
      ),
      connection('require'),
    );
    expect(error.failure).toBe('no_hba_entry');
  });

  it('says which user the password was refused for, and never the password', () => {
    const error = connectionError(
      serverError('28P01', 'password authentication failed for user "app"'),
      connection('verify-full', true),
    );
    expect(error.message).toBe(
      'cannot connect to Postgres at db.internal:5432: password authentication failed for user app',
    );
    expect(JSON.stringify(error)).not.toContain(PASSWORD);
  });

  it('says a password is missing when SCRAM finds none', () => {
    const error = connectionError(
      new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'),
      connection('require'),
    );
    expect(error.failure).toBe('password_missing');
    expect(error.message).toMatch(
      /asks a password for user app and none is set \(DATABASE_PASSWORD\)$/,
    );
  });

  it('names the trust that failed: the CA file, or the system CAs', () => {
    const untrusted = nodeError(
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'unable to verify the first certificate',
    );
    expect(connectionError(untrusted, connection('verify-ca', true)).message).toBe(
      "cannot connect to Postgres at db.internal:5432: the server's certificate is not trusted " +
        '(DATABASE_SSL_CA_FILE): UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    );
    expect(connectionError(untrusted, connection('verify-full')).message).toContain(
      "not trusted (the system's CAs)",
    );
  });

  it('says the certificate is for another host (verify-full)', () => {
    const error = connectionError(
      nodeError(
        'ERR_TLS_CERT_ALTNAME_INVALID',
        "Hostname/IP does not match certificate's altnames",
      ),
      connection('verify-full', true),
    );
    expect(error.message).toBe(
      "cannot connect to Postgres at db.internal:5432: the server's certificate does not match " +
        'host db.internal (verify-full)',
    );
  });

  it('says the server offers no TLS when sslmode asks for it', () => {
    const error = connectionError(
      new Error('The server does not support SSL connections'),
      connection('verify-full'),
    );
    expect(error.message).toMatch(/does not offer TLS, which sslmode=verify-full requires$/);
  });

  it('calls an unreachable server transient', () => {
    const error = connectionError(
      nodeError('ECONNREFUSED', 'connect ECONNREFUSED'),
      connection(''),
    );
    expect(error.failure).toBe('unreachable');
    expect(error.transient).toBe(true);
    expect(error.message).toBe(
      'cannot connect to Postgres at db.internal:5432: cannot reach the server (ECONNREFUSED)',
    );
  });

  it('passes anything else on one line, with the password masked', () => {
    const error = connectionError(
      new Error(`database "payflow" does not exist\n(tried with ${PASSWORD})`),
      connection('require'),
    );
    expect(error.failure).toBe('refused');
    expect(error.message).toBe(
      'cannot connect to Postgres at db.internal:5432: database "payflow" does not exist (tried with [redacted])',
    );
  });
});
