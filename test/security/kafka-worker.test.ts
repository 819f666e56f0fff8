/**
 * The worker end to end on a secured Kafka (SASL_SSL, mutual TLS, StandardAuthorizer with
 * allow.everyone.if.no.acl.found=false), for each way it can authenticate, with exactly the
 * ACLs of CONTRACT §9 (workerAcls) and nothing more: an order in, through the sandbox, a
 * payment.created out. One secured cluster for the file; each case its own principal,
 * topics, group and database, so that its principal holds only its own ACLs.
 *
 * The brokers demand re-authentication every 20 s (connections.max.reauth.ms): the
 * OAUTHBEARER case runs past the lifetime of its first tokens and shows each was replaced
 * before it expired, while orders keep flowing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/logging/logger.js';
import { workerAcls } from '../../src/messaging/security/kafka-acls.js';
import { startWorker, type Worker } from '../../src/worker.js';
import { SecuredKafkaCluster } from '../../testbed/kafka/secured-cluster.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import { createTestDatabase } from '../support/database.js';
import { TopicReader, workerEnvironment } from '../support/pipeline.js';
import { startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import {
  aclConfigOf,
  adminKafka,
  securedKafkaEnvironment,
  securedTopicSet,
  startTokenEndpoint,
  type SecuredIdentity,
  type TokenEndpoint,
} from '../support/secured-kafka.js';

interface StatusEvent {
  readonly type: string;
  readonly orderId: string;
  readonly paymentId: string | null;
}

const TOKEN_LIFETIME_SECONDS = 30;

let kafka: SecuredKafkaCluster;
let sandbox: SandboxHandle;
let tokens: TokenEndpoint;

beforeAll(async () => {
  [kafka, sandbox, tokens] = await Promise.all([
    SecuredKafkaCluster.start({
      users: ['scram-worker', 'plain-worker'],
      reauthMs: 20_000,
    }),
    startTestSandbox(),
    startTokenEndpoint({ sub: 'oauth-worker', lifetimeSeconds: TOKEN_LIFETIME_SECONDS }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled([sandbox?.close(), tokens?.close()]);
  await kafka?.stop();
});

/** The worker of one case, with its own topics, group, database and ACLs. */
interface Case {
  readonly worker: Worker;
  readonly status: TopicReader;
  publishOrder(): Promise<string>;
  waitForCreated(orderId: string): Promise<StatusEvent>;
  stop(): Promise<void>;
}

async function startCase(
  label: string,
  principal: string,
  identity: SecuredIdentity,
): Promise<Case> {
  const [{ topics, groupId }, database] = await Promise.all([
    securedTopicSet(kafka, label),
    createTestDatabase(label),
  ]);
  const acls = workerAcls(aclConfigOf(topics, groupId));
  await kafka.grantAcls(principal, acls);
  // Exactly the least privilege, nothing more (set equality).
  const granted = await kafka.aclsOf(principal);
  expect(granted).toHaveLength(acls.length);
  expect(granted).toEqual(expect.arrayContaining(acls));
  const config = loadConfig({
    ...workerEnvironment({
      databaseUrl: database.url,
      brokers: 'replaced-below:9092',
      groupId,
      topics,
      sandbox,
    }),
    ...securedKafkaEnvironment(kafka, identity),
    KAFKA_SESSION_TIMEOUT: '6s',
    KAFKA_FETCH_MAX_WAIT: '100ms',
    PAYFLOW_REQUEST_TIMEOUT: '5s',
    LOG_LEVEL: 'silent',
  });
  const admin = adminKafka(kafka);
  const producer = admin.producer({ allowAutoTopicCreation: false });
  let worker: Worker | undefined;
  let status: TopicReader | undefined;
  try {
    await producer.connect();
    [worker, status] = await Promise.all([
      startWorker(config, silentLogger(), { relay: { idlePollMs: 100 } }),
      TopicReader.start(admin, topics.status),
    ]);
  } catch (error) {
    await Promise.allSettled([worker?.shutdown(), status?.stop(), producer.disconnect()]);
    await database.drop();
    throw error;
  }
  const reader = status;
  const started = worker;
  return {
    worker: started,
    status: reader,
    async publishOrder() {
      const orderId = anOrderId();
      await producer.send({
        topic: topics.orders,
        messages: [
          {
            key: orderId,
            value: JSON.stringify(
              anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
            ),
          },
        ],
      });
      return orderId;
    },
    async waitForCreated(orderId) {
      await reader.waitFor((messages) => messages.some((m) => m.key === orderId), 60_000);
      const event = reader.json<StatusEvent>().find((e) => e.orderId === orderId);
      if (event === undefined) throw new Error(`no status event for ${orderId}`);
      return event;
    },
    async stop() {
      await started.shutdown();
      await Promise.allSettled([reader.stop(), producer.disconnect()]);
      await database.drop();
    },
  };
}

async function orderRoundTrip(running: Case): Promise<void> {
  const orderId = await running.publishOrder();
  const created = await running.waitForCreated(orderId);
  expect(created.type).toBe('payment.created');
  expect(created.paymentId).toMatch(/^[0-9a-f]{24}$/);
}

describe('the worker on a secured Kafka with exactly its least privilege', () => {
  it('works over SASL_SSL with SCRAM-SHA-512', async () => {
    const running = await startCase('sec_scram', 'User:scram-worker', {
      kind: 'sasl',
      mechanism: 'scram-sha-512',
      user: 'scram-worker',
      password: kafka.password('scram-worker'),
    });
    try {
      await orderRoundTrip(running);
    } finally {
      await running.stop();
    }
  });

  it('works over SASL_SSL with PLAIN', async () => {
    const running = await startCase('sec_plain', 'User:plain-worker', {
      kind: 'sasl',
      mechanism: 'plain',
      user: 'plain-worker',
      password: kafka.password('plain-worker'),
    });
    try {
      await orderRoundTrip(running);
    } finally {
      await running.stop();
    }
  });

  it('works over mutual TLS, its principal the certificate’s CN', async () => {
    const certificate = await kafka.clientCertificate('mtls-worker');
    const running = await startCase('sec_mtls', 'User:mtls-worker', {
      kind: 'mtls',
      ...certificate,
    });
    try {
      await orderRoundTrip(running);
    } finally {
      await running.stop();
    }
  });

  it('works over SASL_SSL with OAUTHBEARER, each token replaced before it expires', async () => {
    const running = await startCase('sec_oauth', 'User:oauth-worker', {
      kind: 'oauthbearer',
      tokenUrl: tokens.url,
      clientId: tokens.clientId,
      clientSecret: tokens.clientSecret,
    });
    try {
      await orderRoundTrip(running);
      const firstExpiry = tokens.issued[0]?.expiresAt ?? 0;
      // Past the first token's lifetime, re-authenticating every ≤ 20 s meanwhile.
      const deadline = Date.now() + 4 * TOKEN_LIFETIME_SECONDS * 1000;
      while (tokens.issued.length < 3 || Date.now() < firstExpiry + 2_000) {
        if (Date.now() > deadline) {
          throw new Error(`only ${tokens.issued.length} tokens issued`);
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await orderRoundTrip(running);
      expect(tokens.refused).toBe(0);
      // Every token was asked for before the one it replaced expired.
      const issued = [...tokens.issued];
      for (let index = 1; index < issued.length; index += 1) {
        expect(issued[index]?.issuedAt).toBeLessThan(issued[index - 1]?.expiresAt ?? 0);
      }
    } finally {
      await running.stop();
    }
  }, 240_000);
});
