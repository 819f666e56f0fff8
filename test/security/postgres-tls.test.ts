/**
 * Postgres over TLS with libpq's sslmode meanings, passwords kept out of URLs, and one clear
 * line when the server refuses us (issue 18 §2), against a private server with `ssl = on`,
 * `hostssl` lines only and SCRAM passwords, whose certificate is for `localhost` alone.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { loadDatabaseConfig } from '../../src/config/app-config.js';
import type { DatabaseConnectionConfig } from '../../src/database/connection-options.js';
import { DatabaseConnectionError } from '../../src/database/database-connection.error.js';
import { WorkerProcess } from '../../testbed/worker-process.js';
import { buildCli, runBinary } from '../cli/cli-test-kit.js';
import { createTopicSet, testKafkaCluster, topicSetFor } from '../support/kafka-test-bed.js';
import {
  probe,
  runCompiled,
  startTlsPostgres,
  TLS_DATABASE,
  type Probe,
  type TlsPostgres,
} from '../support/postgres-tls.js';

// Compiled processes (the worker waits up to 60 s for Kafka and Postgres) on a loaded machine.
jest.setTimeout(120_000);

let server: TlsPostgres;

const SESSIONS = z.array(
  z.object({ application_name: z.string(), query: z.string(), ssl: z.boolean() }),
);
type Session = z.output<typeof SESSIONS>[number];
const isListen = (session: Session): boolean => /^LISTEN /i.test(session.query);

beforeAll(async () => {
  server = await startTlsPostgres();
}, 120_000);

afterAll(() => server?.stop());

function config(
  url: string,
  more: Partial<Omit<DatabaseConnectionConfig, 'DATABASE_URL'>> = {},
): DatabaseConnectionConfig {
  return {
    DATABASE_URL: url,
    DATABASE_SSL_CA_FILE: undefined,
    DATABASE_PASSWORD: server.password,
    ...more,
  };
}

function expectEncrypted(result: Probe): void {
  if (!result.connected) throw result.error;
  expect(result.ssl).toBe(true);
  expect(result.tlsVersion).toMatch(/^TLSv1\.[23]$/);
}

/** The DatabaseConnectionError a probe failed with; its message, checked to hold no secret. */
function failure(result: Probe): DatabaseConnectionError {
  if (result.connected) throw new Error('connected, but should have been refused');
  expect(result.error).toBeInstanceOf(DatabaseConnectionError);
  const error = result.error as DatabaseConnectionError;
  expect(error.code).toBe('DATABASE.CONNECT_FAILED');
  expect(error.message).not.toContain(server.password);
  expect(error.message).not.toContain('postgres://');
  expect(error.message).not.toContain('\n');
  return error;
}

describe('sslmode, as libpq means it', () => {
  it('verify-full connects to localhost with its certificate, over TLS', async () => {
    expectEncrypted(
      await probe(
        config(server.url('localhost', 'verify-full'), { DATABASE_SSL_CA_FILE: server.caFile }),
      ),
    );
  });

  it('verify-full refuses 127.0.0.1, which the certificate does not name', async () => {
    const error = failure(
      await probe(
        config(server.url('127.0.0.1', 'verify-full'), { DATABASE_SSL_CA_FILE: server.caFile }),
      ),
    );
    expect(error.message).toBe(
      `cannot connect to Postgres at 127.0.0.1:${server.port}: the server's certificate does ` +
        'not match host 127.0.0.1 (verify-full)',
    );
    expect(error.failure).toBe('certificate_host_mismatch');
  });

  it('verify-ca checks the chain, not the host name: 127.0.0.1 connects', async () => {
    expectEncrypted(
      await probe(
        config(server.url('127.0.0.1', 'verify-ca'), { DATABASE_SSL_CA_FILE: server.caFile }),
      ),
    );
  });

  it('verify-ca refuses a certificate from another CA', async () => {
    const error = failure(
      await probe(
        config(server.url('localhost', 'verify-ca'), {
          DATABASE_SSL_CA_FILE: server.otherCaFile,
        }),
      ),
    );
    expect(error.failure).toBe('certificate_untrusted');
    expect(error.message).toMatch(
      new RegExp(
        `^cannot connect to Postgres at localhost:${server.port}: the server's certificate is ` +
          'not trusted \\(DATABASE_SSL_CA_FILE\\): [A-Z_]+$',
      ),
    );
  });

  it("verify-full without DATABASE_SSL_CA_FILE trusts the system's CAs, which did not sign it", async () => {
    const error = failure(await probe(config(server.url('localhost', 'verify-full'))));
    expect(error.message).toContain("the server's certificate is not trusted (the system's CAs)");
  });

  it('require without a CA encrypts without verifying (libpq, not node-postgres)', async () => {
    // Neither the CA (made for this run) nor the host name (127.0.0.1) would pass a check.
    expectEncrypted(await probe(config(server.url('127.0.0.1', 'require'))));
  });

  it('require with a CA verifies the chain as verify-ca does (libpq with a root CA)', async () => {
    const wrong = failure(
      await probe(
        config(server.url('localhost', 'require'), { DATABASE_SSL_CA_FILE: server.otherCaFile }),
      ),
    );
    expect(wrong.failure).toBe('certificate_untrusted');
    expectEncrypted(
      await probe(
        config(server.url('127.0.0.1', 'require'), { DATABASE_SSL_CA_FILE: server.caFile }),
      ),
    );
  });

  it.each([['disable'], [undefined]])(
    'sslmode %s against a hostssl-only server: one line saying TLS is required',
    async (mode) => {
      const error = failure(await probe(config(server.url('localhost', mode))));
      expect(error.message).toBe(
        `cannot connect to Postgres at localhost:${server.port}: the server requires TLS ` +
          '(pg_hba has no non-TLS entry for us): set sslmode (require, verify-ca or ' +
          'verify-full) in DATABASE_URL',
      );
    },
  );
});

describe('passwords', () => {
  const verified = (url: string, password: string | undefined): DatabaseConnectionConfig =>
    config(url, { DATABASE_SSL_CA_FILE: server.caFile, DATABASE_PASSWORD: password });

  it('a wrong password: one line naming the user, and the password nowhere', async () => {
    const wrong = `wrong-${server.password}`;
    const result = await probe(verified(server.url('localhost', 'verify-full'), wrong));
    const error = failure(result);
    expect(error.message).toBe(
      `cannot connect to Postgres at localhost:${server.port}: password authentication failed ` +
        'for user postgres',
    );
    expect(error.message).not.toContain(wrong);
    expect(JSON.stringify(error)).not.toContain(wrong);
  });

  it('no password at all: says one is needed', async () => {
    const error = failure(await probe(verified(server.url('localhost', 'verify-full'), undefined)));
    expect(error.failure).toBe('password_missing');
  });

  it("DATABASE_PASSWORD overrides the URL's password", async () => {
    const withWrong = `postgres://postgres:not-it@localhost:${server.port}/payflow_bridge_tls_test?sslmode=verify-full`;
    expectEncrypted(await probe(verified(withWrong, server.password)));
    // The URL's own password is refused: the override is what made it work.
    expect(failure(await probe(verified(withWrong, undefined))).failure).toBe('password_rejected');
    // Without DATABASE_PASSWORD, the URL's password is used (handed to pg as `password`).
    const withRight = withWrong.replace('not-it', encodeURIComponent(server.password));
    expectEncrypted(await probe(verified(withRight, undefined)));
  });

  it('DATABASE_PASSWORD_FILE gives the password (its trailing newline removed)', async () => {
    const loaded = loadDatabaseConfig({
      DATABASE_URL: server.url('localhost', 'verify-full'),
      DATABASE_SSL_CA_FILE: server.caFile,
      DATABASE_PASSWORD_FILE: server.passwordFile,
    });
    expect(loaded.DATABASE_PASSWORD).toBe(server.password);
    expectEncrypted(await probe(loaded));
  });
});

describe('the migrations, a CLI command and the worker, compiled, over TLS', () => {
  const cluster = testKafkaCluster(1);
  const topics = topicSetFor('postgres-tls');

  /** DATABASE_* as an operator sets them: verify-full by name, the password from a file. */
  const secured = (): Record<string, string> => ({
    DATABASE_URL: server.url('localhost', 'verify-full'),
    DATABASE_SSL_CA_FILE: server.caFile,
    DATABASE_PASSWORD_FILE: server.passwordFile,
  });

  const workerEnv = (database: Record<string, string>): Record<string, string> => ({
    ...database,
    KAFKA_BROKERS: cluster.bootstrapServers,
    KAFKA_GROUP_ID: `payflow-bridge-postgres-tls-${randomUUID().slice(0, 8)}`,
    TOPIC_ORDERS: topics.orders,
    TOPIC_PAYMENT_STATUS: topics.status,
    TOPIC_SETTLEMENTS: topics.settlements,
    // Nothing calls Payflow while the worker only starts and stops.
    PAYFLOW_BASE_URL: 'http://127.0.0.1:9',
    PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:9',
    PAYFLOW_CLIENT_ID: 'sandbox-client',
    PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
    WEBHOOK_PUBLIC_BASE_URL: 'https://127.0.0.1:3443',
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    MANAGEMENT_PORT: '0',
    MANAGEMENT_HOST: '127.0.0.1',
    RECONCILE_ENABLED: 'false',
    SETTLEMENT_ENABLED: 'false',
    LOG_LEVEL: 'info',
  });

  const requiresTls = (host: string): string =>
    `cannot connect to Postgres at ${host}:${server.port}: the server requires TLS (pg_hba has ` +
    'no non-TLS entry for us): set sslmode (require, verify-ca or verify-full) in DATABASE_URL';
  const passwordRefused = (): string =>
    `cannot connect to Postgres at localhost:${server.port}: password authentication failed ` +
    'for user postgres';

  beforeAll(async () => {
    await Promise.all([buildCli(), createTopicSet(cluster, topics, { partitions: 2 })]);
  }, 300_000);

  it('`node dist/src/database/migrate.js` migrates over verify-full', async () => {
    const result = await runCompiled('dist/src/database/migrate.js', secured());
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^migrations ran: \S+/);
    const count = await server.instance.admin(
      (client) => client.query<{ n: number }>('SELECT count(*)::int AS n FROM migrations'),
      TLS_DATABASE,
    );
    expect(count.rows[0]?.n).toBeGreaterThan(0);
  });

  it('the migrations refused without TLS: one line', async () => {
    const result = await runCompiled('dist/src/database/migrate.js', {
      ...secured(),
      DATABASE_URL: server.url('localhost', 'disable'),
      DATABASE_SSL_CA_FILE: '',
    });
    expect(result.code).toBe(1);
    expect(result.err).toBe(`migration failed: ${requiresTls('localhost')}\n`);
  });

  it('`payflow-bridge order show` reads over verify-full; a wrong password is one line', async () => {
    await server.instance.admin(
      (client) =>
        client.query(
          `INSERT INTO orders (order_id, organization_id, order_number, state, currency)
           VALUES ('SO-TLS-1', 'org-1', 'N-SO-TLS-1', 'open', 'NOK')`,
        ),
      TLS_DATABASE,
    );
    const shown = await runBinary(['order', 'show', 'SO-TLS-1'], secured());
    expect(shown.err).toBe('');
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(/^Order SO-TLS-1\n/);

    const wrong = `wrong-${server.password}`;
    const refused = await runBinary(['order', 'show', 'SO-TLS-1'], {
      ...secured(),
      DATABASE_PASSWORD_FILE: '',
      DATABASE_PASSWORD: wrong,
    });
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(`payflow-bridge: ${passwordRefused()}\n`);
    expect(refused.out).toBe('');
  });

  it('the worker starts over verify-full, every session of it encrypted (LISTEN included)', async () => {
    const worker = await WorkerProcess.start({ env: workerEnv(secured()), waitFor: 'started' });
    try {
      const sessionsOf = async (): Promise<Session[]> =>
        SESSIONS.parse(
          (
            await server.instance.admin(
              (client) =>
                client.query(
                  `SELECT a.application_name, a.query, s.ssl
                     FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
                    WHERE a.datname = $1 AND a.pid <> pg_backend_pid()`,
                  [TLS_DATABASE],
                ),
              TLS_DATABASE,
            )
          ).rows,
        );
      // The pool's sessions are there at start-up; the LISTEN session (its own pg.Client,
      // made from the pool's options) joins when the outbox relay starts.
      let sessions = await sessionsOf();
      const deadline = Date.now() + 30_000;
      while (!sessions.some(isListen) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        sessions = await sessionsOf();
      }
      expect(sessions.some(isListen)).toBe(true);
      expect(sessions.map((session) => session.application_name)).toContain('payflow-bridge');
      expect(sessions.filter((session) => !session.ssl)).toEqual([]);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });

  const workerFailures: readonly (readonly [string, () => Record<string, string>, () => string])[] =
    [
      [
        'sslmode=disable',
        () => ({
          DATABASE_URL: server.url('localhost', 'disable'),
          DATABASE_PASSWORD_FILE: server.passwordFile,
        }),
        () => requiresTls('localhost'),
      ],
      [
        'a wrong password',
        () => ({
          ...secured(),
          DATABASE_PASSWORD_FILE: '',
          DATABASE_PASSWORD: `x${server.password}`,
        }),
        passwordRefused,
      ],
    ];

  it.each(workerFailures)('the worker with %s exits 1 with one line', async (_case, env, line) => {
    const result = await runCompiled('dist/src/main.js', workerEnv(env()));
    expect(result.code).toBe(1);
    // Ours on stderr is that one line (Node's own process warnings aside); stdout (pino)
    // says the same, and neither holds the password.
    const lines = result.err
      .split('\n')
      .filter((text) => text !== '' && !/^\((node:\d+|Use `node --trace)/.test(text));
    expect(lines).toEqual([`payflow-bridge failed to start: ${line()}`]);
    expect(result.out).toContain(line());
    expect(`${result.out}${result.err}`).not.toContain(server.password);
  });

  it('the worker with sslmode=prefer exits 1 at configuration, before anything connects', async () => {
    const result = await runCompiled(
      'dist/src/main.js',
      workerEnv({ ...secured(), DATABASE_URL: server.url('localhost', 'prefer') }),
    );
    expect(result.code).toBe(1);
    const lines = result.err
      .split('\n')
      .filter((text) => text !== '' && !/^\((node:\d+|Use `node --trace)/.test(text));
    expect(lines).toEqual([
      'Invalid configuration: DATABASE_URL sslmode=prefer is not supported: it falls back ' +
        'between TLS and no TLS without saying so; use disable, require, verify-ca or verify-full',
    ]);
    // Refused before the logger or any connection started.
    expect(result.out).toBe('');
  });
});
