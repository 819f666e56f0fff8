/**
 * A private TLS-only Postgres for the security tests (testbed/postgres-instance.ts with
 * `tls`): a certificate for `localhost` alone signed by a CA made for the run, `hostssl`
 * lines only, SCRAM passwords. Files for DATABASE_SSL_CA_FILE (the right CA and an unrelated
 * one) and DATABASE_PASSWORD_FILE sit in a temporary folder.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { z } from 'zod';
import type { DatabaseConnectionConfig } from '../../src/database/connection-options.js';
import { openDataSource } from '../../src/database/data-source.js';
import { makeTestPki } from '../../testbed/pki.js';
import { PostgresInstance } from '../../testbed/postgres-instance.js';

export const TLS_DATABASE = 'payflow_bridge_tls_test';

export interface TlsPostgres {
  readonly instance: PostgresInstance;
  readonly port: number;
  /** The password of the user postgres (SCRAM). */
  readonly password: string;
  /** PEM files: the CA that signed the server's certificate, and an unrelated CA. */
  readonly caFile: string;
  readonly otherCaFile: string;
  /** A file holding the password and a trailing newline (DATABASE_PASSWORD_FILE). */
  readonly passwordFile: string;
  /** `postgres://postgres@<host>:<port>/<database>?sslmode=<mode>` (no password). */
  url(host: 'localhost' | '127.0.0.1', sslmode?: string): string;
  stop(): Promise<void>;
}

export async function startTlsPostgres(): Promise<TlsPostgres> {
  const pki = await makeTestPki();
  // For localhost only: reached at 127.0.0.1 it does not match the host (verify-full).
  const server = await pki.server('localhost', ['localhost']);
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'pfb-pg-tls-'));
  const caFile = join(dir, 'ca.pem');
  const otherCaFile = join(dir, 'other-ca.pem');
  const passwordFile = join(dir, 'database-password');
  await Promise.all([
    writeFile(caFile, pki.ca.cert),
    writeFile(otherCaFile, pki.otherCa.cert),
    writeFile(passwordFile, `${password}\n`, { mode: 0o600 }),
  ]);
  const instance = await PostgresInstance.start({ tls: { ...server, password } });
  await instance.createDatabase(TLS_DATABASE);
  return {
    instance,
    port: instance.port,
    password,
    caFile,
    otherCaFile,
    passwordFile,
    url: (host, sslmode) =>
      `postgres://postgres@${host}:${instance.port}/${TLS_DATABASE}` +
      (sslmode === undefined ? '' : `?sslmode=${sslmode}`),
    stop: async () => {
      await instance.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type Probe =
  | { readonly connected: true; readonly ssl: boolean; readonly tlsVersion: string | null }
  | { readonly connected: false; readonly error: unknown };

const SSL_ROWS = z.array(z.object({ ssl: z.boolean(), version: z.string().nullable() }));

/**
 * Connects as the worker does (openDataSource) and asks the server whether this session is
 * encrypted (pg_stat_ssl), or returns the error that connecting raised.
 */
export async function probe(config: DatabaseConnectionConfig): Promise<Probe> {
  let dataSource: DataSource;
  try {
    dataSource = await openDataSource({ database: config, poolSize: 1 });
  } catch (error) {
    return { connected: false, error };
  }
  try {
    const [row] = SSL_ROWS.parse(
      await dataSource.query('SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()'),
    );
    if (row === undefined) throw new Error('pg_stat_ssl has no row for this session');
    return { connected: true, ssl: row.ssl, tlsVersion: row.version };
  } finally {
    await dataSource.destroy();
  }
}

export { runCompiled } from './compiled.js';
