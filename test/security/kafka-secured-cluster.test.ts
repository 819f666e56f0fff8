/**
 * The secured test bed itself (testbed/kafka/secured-cluster.ts): every listener and
 * mechanism lets a known principal in, ACLs are enforced (nothing without one), and exactly
 * the worker's least privilege (CONTRACT §9) is enough for an idempotent producer and a
 * consumer group, also when an ACL is withdrawn and given back.
 */
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type KafkaConfig, type SASLOptions } from 'kafkajs';
import { workerAcls, type KafkaAclConfig } from '../../src/messaging/security/kafka-acls.js';
import { SecuredKafkaCluster } from '../../testbed/kafka/secured-cluster.js';

jest.setTimeout(180_000);

let kafka: SecuredKafkaCluster;

beforeAll(async () => {
  kafka = await SecuredKafkaCluster.start();
}, 180_000);

afterAll(async () => {
  await kafka?.stop();
});

function unsecuredJwt(sub: string, lifetimeSeconds: number): string {
  const encode = (value: object): string =>
    Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${encode({ alg: 'none' })}.${encode({ sub, iat: now, exp: now + lifetimeSeconds })}.`;
}

function clientConfig(
  listener: 'saslSsl' | 'ssl',
  extra: Partial<KafkaConfig> & { sasl?: SASLOptions },
): KafkaConfig {
  return {
    clientId: `secured-bed-${randomUUID().slice(0, 6)}`,
    brokers: [...kafka.brokers[listener]],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 10_000,
    retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 1_000 },
    ...extra,
    ssl: {
      ca: [readFileSync(kafka.caFile, 'utf8')],
      rejectUnauthorized: true,
      ...(typeof extra.ssl === 'object' ? extra.ssl : {}),
    },
  };
}

function aclConfig(label: string): KafkaAclConfig {
  const prefix = `${label}-${randomUUID().slice(0, 8)}`;
  return {
    KAFKA_GROUP_ID: `${prefix}-group`,
    TOPIC_ORDERS: `${prefix}.orders`,
    TOPIC_PAYMENT_STATUS: `${prefix}.status`,
    TOPIC_SETTLEMENTS: `${prefix}.settlements`,
  };
}

async function topicsFor(config: KafkaAclConfig): Promise<void> {
  await kafka.createTopics(
    [
      config.TOPIC_ORDERS,
      `${config.TOPIC_ORDERS}.dlq`,
      config.TOPIC_PAYMENT_STATUS,
      config.TOPIC_SETTLEMENTS,
    ],
    2,
  );
}

/** Produces one record idempotently to the status topic, then reads one from orders. */
async function workerRoundTrip(client: KafkaConfig, config: KafkaAclConfig): Promise<string> {
  const value = randomUUID();
  await kafka.withAdmin(async () => {
    const admin = new Kafka(kafka.adminConfig()).producer();
    await admin.connect();
    await admin.send({ topic: config.TOPIC_ORDERS, messages: [{ key: 'k', value }] });
    await admin.disconnect();
  });
  const producer = new Kafka(client).producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    await producer.send({ topic: config.TOPIC_PAYMENT_STATUS, messages: [{ key: 'k', value }] });
  } finally {
    await producer.disconnect();
  }
  const consumer = new Kafka(client).consumer({ groupId: config.KAFKA_GROUP_ID });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: config.TOPIC_ORDERS, fromBeginning: true });
    const seen = new Promise<string>((resolve) => {
      void consumer.run({
        eachMessage: ({ message }) => {
          const text = message.value?.toString() ?? '';
          if (text === value) resolve(text);
          return Promise.resolve();
        },
      });
    });
    return await seen;
  } finally {
    await consumer.disconnect();
  }
}

it('refuses a principal without ACLs (allow.everyone.if.no.acl.found=false)', async () => {
  const config = aclConfig('none');
  await topicsFor(config);
  const producer = new Kafka(
    clientConfig('saslSsl', {
      sasl: {
        mechanism: 'scram-sha-512',
        username: 'operator',
        password: kafka.password('operator'),
      },
    }),
  ).producer();
  await producer.connect();
  await expect(
    producer.send({ topic: config.TOPIC_PAYMENT_STATUS, messages: [{ value: 'x' }] }),
  ).rejects.toThrow(/[Aa]uthoriz/);
  await producer.disconnect();
});

it.each([
  ['SCRAM-SHA-512', 'scram'],
  ['PLAIN', 'plain'],
  ['OAUTHBEARER', 'oauth'],
  ['mutual TLS', 'mtls'],
] as const)('lets the worker in over %s with exactly its least privilege', async (_name, how) => {
  const config = aclConfig(how);
  await topicsFor(config);
  await kafka.grantAcls('User:worker', workerAcls(config));
  expect(await kafka.aclsOf('User:worker')).toEqual(expect.arrayContaining(workerAcls(config)));
  let client: KafkaConfig;
  switch (how) {
    case 'scram':
      client = clientConfig('saslSsl', {
        sasl: {
          mechanism: 'scram-sha-512',
          username: 'worker',
          password: kafka.password('worker'),
        },
      });
      break;
    case 'plain':
      client = clientConfig('saslSsl', {
        sasl: { mechanism: 'plain', username: 'worker', password: kafka.password('worker') },
      });
      break;
    case 'oauth':
      client = clientConfig('saslSsl', {
        sasl: {
          mechanism: 'oauthbearer',
          oauthBearerProvider: () => Promise.resolve({ value: unsecuredJwt('worker', 300) }),
        },
      });
      break;
    case 'mtls': {
      const files = await kafka.clientCertificate('worker');
      client = clientConfig('ssl', {
        ssl: {
          cert: readFileSync(files.certFile, 'utf8'),
          key: readFileSync(files.keyFile, 'utf8'),
        },
      });
      break;
    }
  }
  await expect(workerRoundTrip(client, config)).resolves.toHaveLength(36);
});

it('enforces a withdrawn ACL and honours it again once restored', async () => {
  const config = aclConfig('revoke');
  await topicsFor(config);
  await kafka.grantWorkerAcls('User:worker', config);
  const client = clientConfig('saslSsl', {
    sasl: { mechanism: 'scram-sha-512', username: 'worker', password: kafka.password('worker') },
  });
  const acl = {
    resourceType: 'topic',
    resourceName: config.TOPIC_PAYMENT_STATUS,
    operation: 'WRITE',
  } as const;
  const producer = new Kafka(client).producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    await producer.send({ topic: config.TOPIC_PAYMENT_STATUS, messages: [{ value: 'before' }] });
    await kafka.revokeAcl('User:worker', acl);
    await expect(
      producer.send({ topic: config.TOPIC_PAYMENT_STATUS, messages: [{ value: 'denied' }] }),
    ).rejects.toThrow(/[Aa]uthoriz/);
    await kafka.restoreAcl('User:worker', acl);
    await producer.send({ topic: config.TOPIC_PAYMENT_STATUS, messages: [{ value: 'after' }] });
  } finally {
    await producer.disconnect();
  }
});
