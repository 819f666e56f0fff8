/**
 * The one place that turns DATABASE_URL, DATABASE_SSL_CA_FILE and DATABASE_PASSWORD into
 * node-postgres connection options (CONTRACT §9). Every connection of the worker, the
 * migrations and the CLI is made from what this returns.
 *
 * `sslmode` has libpq's meanings, not node-postgres's (pg-connection-string reads `require`
 * as full verification):
 *
 * | sslmode       | TLS | chain verified                        | host name verified |
 * |---------------|-----|---------------------------------------|--------------------|
 * | (absent)      | no  | –                                     | –                  |
 * | `disable`     | no  | –                                     | –                  |
 * | `require`     | yes | only with DATABASE_SSL_CA_FILE (libpq: a root CA makes it verify-ca) | no |
 * | `verify-ca`   | yes | against DATABASE_SSL_CA_FILE, else the system's CAs | no   |
 * | `verify-full` | yes | against DATABASE_SSL_CA_FILE, else the system's CAs | yes  |
 *
 * `allow` and `prefer` are refused: libpq falls back between TLS and no TLS on its own,
 * which node-postgres cannot do, and which an attacker on the path can force. Absent
 * sslmode keeps what the bridge always did (no TLS), where libpq would `prefer`.
 *
 * pg would let its own parse of a connection string override explicit options (the URL's
 * ssl parameters and even an empty password win), so pg is given no connection string at
 * all: host, port, user, database and the other URL parameters are handed over one by one,
 * and the password only as `password`, never spliced into a URL that could be logged.
 */
import { fileErrorCode } from '../errors/file-error.js';
import { readFileSync } from 'node:fs';
import type { PeerCertificate } from 'node:tls';
import { ConfigError, type DatabaseConfig } from '../config/app-config.js';

export const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The variables a connection is made from (AppConfig and CliConfig both carry them). */
export type DatabaseConnectionConfig = Pick<
  DatabaseConfig,
  'DATABASE_URL' | 'DATABASE_SSL_CA_FILE' | 'DATABASE_PASSWORD'
>;

/** The part of Node's tls.connect options an sslmode sets. */
export interface PostgresTls {
  /** PEM of the CA(s) to trust; absent: the system's CAs. */
  readonly ca?: string;
  readonly rejectUnauthorized: boolean;
  /** Replaces the host name check (verify-ca: none); absent: Node's own check. */
  readonly checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
}

/** What pg needs to connect, and what an error message may say about it. */
export interface PostgresConnection {
  /** Undefined: pg's default (PGHOST, else localhost). */
  readonly host: string | undefined;
  /** Undefined: pg's default (PGPORT, else 5432). */
  readonly port: number | undefined;
  readonly user: string | undefined;
  readonly database: string | undefined;
  /** Not enumerable: a logged or serialized connection shows no password. */
  readonly password: string | undefined;
  /** `false`: no TLS; otherwise the options of Node's tls.connect. */
  readonly ssl: false | PostgresTls;
  /** The URL's sslmode; undefined when it has none. */
  readonly sslMode: SslMode | undefined;
  /** Whether DATABASE_SSL_CA_FILE gave the CA (otherwise the system's CAs, when verifying). */
  readonly customCa: boolean;
  /** The URL's other query parameters (application_name, options, …), for pg as they are. */
  readonly parameters: Readonly<Record<string, string>>;
}

/** libpq modes node-postgres cannot follow faithfully (see the header). */
const FALLBACK_MODES = new Set(['allow', 'prefer']);

/**
 * Parameters about TLS other than sslmode: pg would read some of them on its own (and turn
 * verification on or off), so they are refused rather than silently dropped.
 */
function isSslParameter(name: string): boolean {
  return (name.startsWith('ssl') && name !== 'sslmode') || name === 'uselibpqcompat';
}

function configError(problem: string): ConfigError {
  return new ConfigError('DATABASE_URL', problem);
}

function parseUrl(value: string): { url: URL; hostless: boolean } {
  try {
    return { url: new URL(value), hostless: false };
  } catch {
    // `postgres://user@/db?host=/run/postgresql`: no host before the path (as pg reads it).
    try {
      return { url: new URL(value.replace('@/', '@___DUMMY___/')), hostless: true };
    } catch {
      // Never the value: it may hold a password.
      throw configError('is not a valid URL');
    }
  }
}

function sslModeOf(value: string | null): SslMode | undefined {
  if (value === null) return undefined;
  const mode = SSL_MODES.find((candidate) => candidate === value);
  if (mode !== undefined) return mode;
  if (FALLBACK_MODES.has(value)) {
    throw configError(
      `sslmode=${value} is not supported: it falls back between TLS and no TLS without saying so; ` +
        'use disable, require, verify-ca or verify-full',
    );
  }
  throw configError('sslmode must be disable, require, verify-ca or verify-full');
}

function readCa(path: string, readFile: (path: string) => string): string {
  let content: string;
  try {
    content = readFile(path);
  } catch (error) {
    throw new ConfigError(
      'DATABASE_SSL_CA_FILE',
      `names a file that cannot be read (${fileErrorCode(error)})`,
    );
  }
  if (!content.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError('DATABASE_SSL_CA_FILE', 'holds no PEM certificate');
  }
  return content;
}

/** Node's TLS options for an sslmode, libpq's way. */
export function tlsOptionsFor(
  mode: SslMode | undefined,
  ca: string | undefined,
): false | PostgresTls {
  const trust = ca === undefined ? {} : { ca };
  // Only the host name check is skipped: the chain is still verified.
  const anyHostName = (): undefined => undefined;
  switch (mode) {
    case undefined:
    case 'disable':
      return false;
    case 'require':
      // libpq: encryption only; with a root CA, `require` behaves as `verify-ca`.
      return ca === undefined
        ? { rejectUnauthorized: false }
        : { ...trust, rejectUnauthorized: true, checkServerIdentity: anyHostName };
    case 'verify-ca':
      return { ...trust, rejectUnauthorized: true, checkServerIdentity: anyHostName };
    case 'verify-full':
      // Node's default checkServerIdentity checks the host name (or IP) pg connects to.
      return { ...trust, rejectUnauthorized: true };
  }
}

/**
 * Builds the connection from the configuration. Throws a ConfigError (one line naming the
 * variable, never its value) for an invalid URL or sslmode, a TLS parameter of the URL we
 * do not read, a CA file without TLS, or an unreadable CA file.
 */
export function postgresConnection(
  config: DatabaseConnectionConfig,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): PostgresConnection {
  const { url, hostless } = parseUrl(config.DATABASE_URL);
  const parameters: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    if (isSslParameter(name)) {
      throw configError(
        `has ${name}, which is not read: use sslmode, and DATABASE_SSL_CA_FILE for the CA`,
      );
    }
    parameters[name] = value;
  }
  const sslMode = sslModeOf(url.searchParams.get('sslmode'));
  // As pg reads a URL: these parameters win over the URL's own parts.
  const { host: hostParameter, port: portParameter } = parameters;
  const { user: userParameter, password: passwordParameter } = parameters;
  for (const name of ['sslmode', 'host', 'port', 'user', 'password']) delete parameters[name];

  if (
    config.DATABASE_SSL_CA_FILE !== undefined &&
    (sslMode === undefined || sslMode === 'disable')
  ) {
    throw new ConfigError(
      'DATABASE_SSL_CA_FILE',
      `is set but DATABASE_URL's sslmode is ${sslMode ?? 'not set'} (a CA needs require, verify-ca or verify-full)`,
    );
  }
  const ca =
    config.DATABASE_SSL_CA_FILE === undefined
      ? undefined
      : readCa(config.DATABASE_SSL_CA_FILE, readFile);

  const hostname = hostless ? '' : url.hostname.replace(/^\[(.+)\]$/, '$1');
  const host = hostParameter ?? (hostname === '' ? undefined : decodeURIComponent(hostname));
  const portText = portParameter ?? url.port;
  const port = portText === '' ? undefined : Number(portText);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
    throw configError('has an invalid port');
  }
  const urlUser = decodeURIComponent(url.username);
  const urlPassword = decodeURIComponent(url.password);
  const path = url.pathname.slice(1);

  const connection: PostgresConnection = {
    host,
    port,
    user: userParameter ?? (urlUser === '' ? undefined : urlUser),
    database: path === '' ? undefined : decodeURI(path),
    ssl: tlsOptionsFor(sslMode, ca),
    sslMode,
    customCa: ca !== undefined,
    parameters,
    password:
      config.DATABASE_PASSWORD ??
      passwordParameter ??
      (urlPassword === '' ? undefined : urlPassword),
  };
  return Object.defineProperty(connection, 'password', { enumerable: false });
}

/** `host:port` for messages (pg's defaults when the URL names none). */
export function describeServer(connection: PostgresConnection): string {
  return `${connection.host ?? 'localhost'}:${connection.port ?? 5432}`;
}
