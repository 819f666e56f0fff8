/**
 * A failure to connect to Postgres, said in one line that names what failed (TLS demanded,
 * password refused, certificate untrusted or for another host, server unreachable) and
 * never the URL or the password. The worker prints it as `payflow-bridge failed to start:
 * <message>`, the CLI and the migrations as their one error line.
 */
import { AppError } from '../errors/app-error.js';
import { describeServer, type PostgresConnection } from './connection-options.js';

export const CONNECTION_FAILURES = [
  'tls_required',
  'tls_not_offered',
  'no_hba_entry',
  'password_rejected',
  'password_missing',
  'certificate_untrusted',
  'certificate_expired',
  'certificate_host_mismatch',
  'unreachable',
  'refused',
] as const;
export type ConnectionFailure = (typeof CONNECTION_FAILURES)[number];

export class DatabaseConnectionError extends AppError {
  readonly code = 'DATABASE.CONNECT_FAILED';
  readonly transient: boolean;

  constructor(
    readonly failure: ConnectionFailure,
    message: string,
    connection: PostgresConnection,
    cause: unknown,
  ) {
    super(message, {
      cause,
      metadata: {
        failure,
        host: connection.host ?? 'localhost',
        port: connection.port ?? 5432,
        sslmode: connection.sslMode ?? 'unset',
      },
    });
    this.transient = failure === 'unreachable';
  }
}

/** Node's codes for a certificate chain that does not lead to a trusted CA. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'INVALID_CA',
  'INVALID_PURPOSE',
]);
const OUT_OF_DATE = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOENT',
]);

function field(error: unknown, name: string): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const value: unknown = Reflect.get(error, name);
  return typeof value === 'string' ? value : undefined;
}

/** The error's own message on one line, with the password (should it appear) masked. */
function scrubbed(error: unknown, connection: PostgresConnection): string {
  let text = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
  const password = connection.password;
  if (password !== undefined && password !== '') text = text.split(password).join('[redacted]');
  return text === '' ? 'unknown error' : text;
}

function classify(
  error: unknown,
  connection: PostgresConnection,
): { failure: ConnectionFailure; reason: string } {
  const code = field(error, 'code');
  const message = error instanceof Error ? error.message : '';
  const user = connection.user === undefined ? 'the default user' : `user ${connection.user}`;
  const usesTls = connection.ssl !== false;
  const trust = connection.customCa ? 'DATABASE_SSL_CA_FILE' : "the system's CAs";
  // Postgres: 28000 invalid_authorization_specification (pg_hba), 28P01 invalid_password.
  if (code === '28000' && /pg_hba\.conf/.test(message)) {
    return usesTls
      ? {
          failure: 'no_hba_entry',
          reason: `the server has no pg_hba entry for ${user} on this database with TLS`,
        }
      : {
          failure: 'tls_required',
          reason:
            'the server requires TLS (pg_hba has no non-TLS entry for us): set sslmode ' +
            '(require, verify-ca or verify-full) in DATABASE_URL',
        };
  }
  if (code === '28P01') {
    return { failure: 'password_rejected', reason: `password authentication failed for ${user}` };
  }
  if (/password must be a string/i.test(message)) {
    return {
      failure: 'password_missing',
      reason: `the server asks a password for ${user} and none is set (DATABASE_PASSWORD)`,
    };
  }
  if (/does not support SSL/i.test(message)) {
    return {
      failure: 'tls_not_offered',
      reason: `the server does not offer TLS, which sslmode=${connection.sslMode ?? 'unset'} requires`,
    };
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return {
      failure: 'certificate_host_mismatch',
      reason: `the server's certificate does not match host ${connection.host ?? 'localhost'} (verify-full)`,
    };
  }
  if (code !== undefined && UNTRUSTED.has(code)) {
    return {
      failure: 'certificate_untrusted',
      reason: `the server's certificate is not trusted (${trust}): ${code}`,
    };
  }
  if (code !== undefined && OUT_OF_DATE.has(code)) {
    return {
      failure: 'certificate_expired',
      reason: `the server's certificate is not valid at this time: ${code}`,
    };
  }
  if (
    (code !== undefined && UNREACHABLE.has(code)) ||
    /timeout|terminated unexpectedly/i.test(message)
  ) {
    return {
      failure: 'unreachable',
      reason: `cannot reach the server (${code ?? scrubbed(error, connection)})`,
    };
  }
  return { failure: 'refused', reason: scrubbed(error, connection) };
}

/** Translates a driver's connection error into a DatabaseConnectionError. */
export function connectionError(
  error: unknown,
  connection: PostgresConnection,
): DatabaseConnectionError {
  if (error instanceof DatabaseConnectionError) return error;
  const { failure, reason } = classify(error, connection);
  return new DatabaseConnectionError(
    failure,
    `cannot connect to Postgres at ${describeServer(connection)}: ${reason}`,
    connection,
    error,
  );
}
