/**
 * The compiled worker (`node dist/src/main.js`, what `npm start` runs) against a secured
 * Kafka that refuses it: bad credentials, an untrusted CA, a mechanism the brokers do not
 * enable, a missing or untrusted client certificate, a token endpoint that refuses the
 * client. Each time it exits non-zero within a minute, with one line on stderr that says what
 * failed, and the secret appears nowhere in what it wrote (its logs at info included).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SecuredKafkaCluster } from '../../testbed/kafka/secured-cluster.js';
import { buildCli } from '../cli/cli-test-kit.js';
import { runCompiled, type ProcessResult } from '../support/compiled.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { topicSetFor } from '../support/kafka-test-bed.js';
import { workerEnvironment } from '../support/pipeline.js';
import {
  securedKafkaEnvironment,
  startTokenEndpoint,
  type SecuredIdentity,
  type TokenEndpoint,
} from '../support/secured-kafka.js';

const WRONG_PASSWORD = 'Wr0ng-Pa55word-7f3a';

let kafka: SecuredKafkaCluster;
let database: TestDatabase;
let tokens: TokenEndpoint;
let expiredTokens: TokenEndpoint;

beforeAll(async () => {
  [kafka, database, tokens, expiredTokens] = await Promise.all([
    SecuredKafkaCluster.start(),
    createTestDatabase('sec_refused'),
    startTokenEndpoint({ sub: 'worker', lifetimeSeconds: 300 }),
    startTokenEndpoint({ sub: 'worker', lifetimeSeconds: 300, expired: true }),
    buildCli(),
  ]);
}, 300_000);

afterAll(async () => {
  await Promise.allSettled([tokens?.close(), expiredTokens?.close(), database?.drop()]);
  await kafka?.stop();
});

/** `node dist/src/main.js` with exactly `env`; killed after 90 s (the test fails then). */
async function runWorker(
  env: Record<string, string>,
): Promise<ProcessResult & { elapsedMs: number }> {
  const started = Date.now();
  const result = await runCompiled('dist/src/main.js', env, 90_000);
  return { ...result, elapsedMs: Date.now() - started };
}

function environment(identity: SecuredIdentity, caFile?: string): Record<string, string> {
  return {
    ...workerEnvironment({
      databaseUrl: database.url,
      brokers: 'replaced-below:9092',
      groupId: 'payflow-bridge-refused',
      topics: topicSetFor('sec_refused'),
      sandbox: { url: 'http://127.0.0.1:9', partnerUrl: 'http://127.0.0.1:9/partner' },
    }),
    ...securedKafkaEnvironment(kafka, identity, caFile),
    // At info, so that what the worker logs is checked for the secret too.
    LOG_LEVEL: 'info',
  };
}

async function expectRefused(
  env: Record<string, string>,
  line: string | RegExp,
  secret: string,
): Promise<void> {
  const result = await runWorker(env);
  expect(result.code).toBe(1);
  expect(result.elapsedMs).toBeLessThan(60_000);
  const lines = result.err.trim().split('\n');
  expect(lines).toHaveLength(1);
  if (typeof line === 'string') expect(lines[0]).toBe(line);
  else expect(lines[0]).toMatch(line);
  expect(result.err).not.toContain(secret);
  expect(result.out).not.toContain(secret);
}

describe('the worker refused by a secured Kafka', () => {
  it('exits with one line naming the user when its SCRAM password is wrong', async () => {
    await expectRefused(
      environment({
        kind: 'sasl',
        mechanism: 'scram-sha-512',
        user: 'worker',
        password: WRONG_PASSWORD,
      }),
      'payflow-bridge failed to start: Kafka authentication failed (SASL SCRAM-SHA-512, user worker): ' +
        'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512',
      WRONG_PASSWORD,
    );
  });

  it('exits the same way for a user the brokers do not know', async () => {
    await expectRefused(
      environment({
        kind: 'sasl',
        mechanism: 'scram-sha-512',
        user: 'nobody',
        password: WRONG_PASSWORD,
      }),
      'payflow-bridge failed to start: Kafka authentication failed (SASL SCRAM-SHA-512, user nobody): ' +
        'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512',
      WRONG_PASSWORD,
    );
  });

  it('exits when its PLAIN password is wrong', async () => {
    await expectRefused(
      environment({ kind: 'sasl', mechanism: 'plain', user: 'worker', password: WRONG_PASSWORD }),
      'payflow-bridge failed to start: Kafka authentication failed (SASL PLAIN, user worker): ' +
        'Authentication failed: Invalid username or password',
      WRONG_PASSWORD,
    );
  });

  it('exits when the brokers do not enable its SASL mechanism', async () => {
    const password = kafka.password('worker');
    await expectRefused(
      environment({ kind: 'sasl', mechanism: 'scram-sha-256', user: 'worker', password }),
      'payflow-bridge failed to start: Kafka: the brokers do not accept SASL mechanism SCRAM-SHA-256 ' +
        '(KAFKA_SASL_MECHANISM=scram-sha-256)',
      password,
    );
  });

  it('exits when it does not trust the brokers’ CA', async () => {
    const password = kafka.password('worker');
    await expectRefused(
      environment(
        { kind: 'sasl', mechanism: 'scram-sha-512', user: 'worker', password },
        kafka.otherCaFile,
      ),
      `payflow-bridge failed to start: Kafka TLS: the brokers' certificate is not trusted ` +
        `(KAFKA_SSL_CA_FILE ${kafka.otherCaFile}): UNABLE_TO_VERIFY_LEAF_SIGNATURE`,
      password,
    );
  });

  it('exits when the mutual-TLS listener gets no client certificate', async () => {
    const env = environment({ kind: 'mtls', certFile: 'unused', keyFile: 'unused' });
    delete env['KAFKA_SSL_CERT_FILE'];
    delete env['KAFKA_SSL_KEY_FILE'];
    await expectRefused(
      env,
      'payflow-bridge failed to start: Kafka TLS: the brokers require a client certificate ' +
        '(set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE)',
      '-----BEGIN',
    );
  });

  it('exits when its client certificate is signed by a CA the brokers do not trust', async () => {
    const certificate = await kafka.untrustedClientCertificate('worker');
    await expectRefused(
      environment({ kind: 'mtls', ...certificate }),
      `payflow-bridge failed to start: Kafka TLS: the brokers refused our client certificate ` +
        `(KAFKA_SSL_CERT_FILE ${certificate.certFile}): TLS alert certificate unknown`,
      'PRIVATE KEY',
    );
  });

  it('exits when the token endpoint refuses its OAUTHBEARER client secret', async () => {
    const refusedBefore = tokens.refused;
    await expectRefused(
      environment({
        kind: 'oauthbearer',
        tokenUrl: tokens.url,
        clientId: tokens.clientId,
        clientSecret: WRONG_PASSWORD,
      }),
      `payflow-bridge failed to start: Kafka OAUTHBEARER token request failed ` +
        `(KAFKA_SASL_OAUTHBEARER_TOKEN_URL ${tokens.url}, client ${tokens.clientId}): HTTP 401: invalid_client`,
      WRONG_PASSWORD,
    );
    expect(tokens.refused).toBeGreaterThan(refusedBefore);
  });

  it('exits when the brokers refuse its OAUTHBEARER token', async () => {
    await expectRefused(
      environment({
        kind: 'oauthbearer',
        tokenUrl: expiredTokens.url,
        clientId: expiredTokens.clientId,
        clientSecret: expiredTokens.clientSecret,
      }),
      'payflow-bridge failed to start: Kafka authentication failed (SASL OAUTHBEARER, client ' +
        'payflow-bridge): the brokers refused the token (status invalid_token)',
      expiredTokens.clientSecret,
    );
    expect(expiredTokens.issued.length).toBeGreaterThan(0);
  });

  it('exits when it speaks plaintext to the brokers’ TLS listener', async () => {
    const password = kafka.password('worker');
    const env = environment({ kind: 'sasl', mechanism: 'scram-sha-512', user: 'worker', password });
    delete env['KAFKA_SSL'];
    delete env['KAFKA_SSL_CA_FILE'];
    await expectRefused(
      env,
      'payflow-bridge failed to start: Kafka: the brokers closed the connection as soon as it ' +
        'opened, 4 times (SASL SCRAM-SHA-512, user worker): does their listener expect TLS ' +
        '(KAFKA_SSL) or SASL (KAFKA_SASL_MECHANISM)?',
      password,
    );
  });

  it('exits when it does not authenticate to the brokers’ SASL listener', async () => {
    const env = environment({
      kind: 'sasl',
      mechanism: 'scram-sha-512',
      user: 'worker',
      password: 'x',
    });
    for (const name of ['KAFKA_SASL_MECHANISM', 'KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD']) {
      delete env[name];
    }
    await expectRefused(
      env,
      'payflow-bridge failed to start: Kafka: the brokers closed the connection as soon as it ' +
        'opened, 4 times (TLS, no authentication): does their listener expect TLS (KAFKA_SSL) ' +
        'or SASL (KAFKA_SASL_MECHANISM)?',
      kafka.password('worker'),
    );
  });

  it('exits saying it may not DESCRIBE its topics when its ACLs are missing', async () => {
    const password = kafka.password('worker');
    const topics = topicSetFor('sec_refused');
    const env = {
      ...environment({ kind: 'sasl', mechanism: 'scram-sha-512', user: 'worker', password }),
      TOPIC_ORDERS: topics.orders,
      TOPIC_PAYMENT_STATUS: topics.status,
      TOPIC_SETTLEMENTS: topics.settlements,
    };
    await kafka.createTopics([topics.orders, topics.dlq, topics.status, topics.settlements], 1);
    await expectRefused(
      env,
      `payflow-bridge failed to start: Kafka: not allowed to DESCRIBE topics ` +
        `${[topics.orders, topics.dlq, topics.status, topics.settlements].join(', ')} ` +
        `(SASL SCRAM-SHA-512, user worker): the worker's ACLs are missing (READ, DESCRIBE on ` +
        `TOPIC_ORDERS; WRITE, DESCRIBE on its .dlq, TOPIC_PAYMENT_STATUS and TOPIC_SETTLEMENTS; ` +
        `READ on group KAFKA_GROUP_ID)`,
      password,
    );
  });

  it('exits naming the variable of a CA file it cannot read', async () => {
    const password = kafka.password('worker');
    await expectRefused(
      environment(
        { kind: 'sasl', mechanism: 'scram-sha-512', user: 'worker', password },
        '/nonexistent/kafka-ca.pem',
      ),
      'payflow-bridge failed to start: Invalid configuration: KAFKA_SSL_CA_FILE cannot be read ' +
        '(/nonexistent/kafka-ca.pem: ENOENT)',
      password,
    );
  });
});
