/** TopicAdmin (topics.port.ts) over a kafkajs admin client. */
import { setTimeout as delay } from 'node:timers/promises';
import type { Admin, ITopicConfig } from 'kafkajs';
import { AppError } from '../../errors/app-error.js';
import { describeKafkaIdentity, explainKafkaAccessError } from '../security/kafka-security.js';
import { checkKafkaAccess, createKafkaClient, type KafkaClientOptions } from './kafka.client.js';
import {
  assertTopicsExist,
  requiredTopics,
  TopicsMissingError,
  type TopicAdmin,
  type TopicDescription,
  type TopicSpec,
  type TopicsConfig,
} from './topics.port.js';

/** A Kafka admin request failed; the message carries the broker's own words. */
export class TopicAdminError extends AppError {
  readonly code = 'kafka.topic_admin_failed';
  readonly transient = false;

  constructor(what: string, cause: unknown) {
    super(`${what}: ${kafkaErrorText(cause)}`, { cause });
  }
}

/** kafkajs puts the brokers' reasons of a failed createTopics into `errors`. */
function kafkaErrorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner: unknown = Reflect.get(error, 'errors');
  if (Array.isArray(inner) && inner.length > 0) {
    return inner.map((item) => (item instanceof Error ? item.message : String(item))).join('; ');
  }
  return error.message;
}

export class KafkaTopicAdmin implements TopicAdmin {
  private connected: Promise<void> | undefined;

  constructor(private readonly admin: Admin) {}

  private connect(): Promise<void> {
    this.connected ??= this.admin.connect();
    return this.connected;
  }

  async describe(names: readonly string[]): Promise<readonly TopicDescription[]> {
    await this.connect();
    const all = new Set(await this.admin.listTopics());
    const existing = names.filter((name) => all.has(name));
    if (existing.length === 0) return [];
    const { topics } = await this.admin.fetchTopicMetadata({ topics: existing });
    return topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.length,
      replicationFactor: Math.max(0, ...topic.partitions.map((p) => p.replicas.length)),
    }));
  }

  async brokerCount(): Promise<number> {
    await this.connect();
    return (await this.admin.describeCluster()).brokers.length;
  }

  async create(specs: readonly TopicSpec[]): Promise<ReadonlyMap<string, boolean>> {
    await this.connect();
    const created = new Map<string, boolean>();
    // One request per topic: kafkajs answers false for a whole request as soon as one of
    // its topics already existed, which would hide what the others did.
    for (const spec of specs) {
      const result = await this.admin
        .createTopics({
          topics: [
            {
              topic: spec.name,
              numPartitions: spec.partitions,
              replicationFactor: spec.replicationFactor,
              configEntries: Object.entries(spec.config).map(([name, value]) => ({ name, value })),
            },
          ],
          waitForLeaders: false,
        })
        .catch((error: unknown) => {
          throw new TopicAdminError(`could not create topic ${spec.name}`, error);
        });
      await waitForLeaders(this.admin, [spec.name]).catch((error: unknown) => {
        throw new TopicAdminError(`topic ${spec.name} has no leaders yet`, error);
      });
      created.set(spec.name, result);
    }
    return created;
  }

  async close(): Promise<void> {
    if (this.connected === undefined) return;
    await this.admin.disconnect();
  }
}

/**
 * Resolves when every partition of `topics` has a leader. kafkajs's own `waitForLeaders`
 * gives up on "This server does not host this topic-partition", which a KRaft broker answers
 * until it has applied the controller's record of a topic it just created (seen under load):
 * that answer, like a missing leader, only means "not yet" here.
 */
export async function waitForLeaders(
  admin: Admin,
  topics: readonly string[],
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = await admin
      .fetchTopicMetadata({ topics: [...topics] })
      .then(({ topics: found }) =>
        topics.every((name) => {
          const partitions = found.find((topic) => topic.name === name)?.partitions ?? [];
          return partitions.length > 0 && partitions.every((partition) => partition.leader >= 0);
        }),
      )
      .catch((error: unknown) => {
        if (Date.now() > deadline) throw error;
        return false;
      });
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`no leaders after ${timeoutMs} ms`);
    await delay(100);
  }
}

/** Creates topics (false: some existed already) and waits for their leaders. */
export async function createTopicsAndWait(
  admin: Admin,
  topics: readonly ITopicConfig[],
  timeoutMs = 30_000,
): Promise<boolean> {
  if (topics.length === 0) return false;
  const created = await admin.createTopics({ topics: [...topics], waitForLeaders: false });
  await waitForLeaders(
    admin,
    topics.map((topic) => topic.topic),
    timeoutMs,
  );
  return created;
}

export function createKafkaTopicAdmin(client: KafkaClientOptions): TopicAdmin {
  return new KafkaTopicAdmin(createKafkaClient(client).admin());
}

/**
 * The worker's start-up check, its first contact with Kafka: rejects with KafkaAccessError
 * (one line, no secret) when the brokers refuse its credentials or its TLS, at once rather
 * than after kafkajs' retries; then with TopicsMissingError (code `kafka.topics_missing`)
 * naming every topic of the configuration that does not exist (or that its ACLs do not let
 * it DESCRIBE: Kafka does not tell the two apart).
 */
export async function checkWorkerTopics(
  client: KafkaClientOptions,
  config: TopicsConfig,
): Promise<void> {
  await checkKafkaAccess(client);
  const admin = createKafkaTopicAdmin(client);
  try {
    await assertTopicsExist(admin, requiredTopics(config));
  } catch (error) {
    if (error instanceof TopicsMissingError && client.security !== undefined) {
      const denied = await topicsDeniedToDescribe(client, error.topics);
      if (denied.length > 0) throw new TopicDescribeDeniedError(denied, client);
    }
    throw explainKafkaAccessError(error, client.security ?? {}) ?? error;
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/**
 * The brokers hide a topic from a principal without DESCRIBE on it: it looks missing. Said as
 * what it is, so that an operator grants the ACL rather than creating a topic that exists.
 */
export class TopicDescribeDeniedError extends AppError {
  readonly code = 'kafka.topic_describe_denied';
  readonly transient = false;

  constructor(
    readonly topics: readonly string[],
    client: KafkaClientOptions,
  ) {
    super(
      `Kafka: not allowed to DESCRIBE topic${topics.length === 1 ? '' : 's'} ${topics.join(', ')} ` +
        `(${describeKafkaIdentity(client.security ?? {})}): the worker's ACLs are missing ` +
        `(READ, DESCRIBE on TOPIC_ORDERS; WRITE, DESCRIBE on its .dlq, TOPIC_PAYMENT_STATUS ` +
        `and TOPIC_SETTLEMENTS; READ on group KAFKA_GROUP_ID)`,
      { metadata: { topics: topics.join(','), count: topics.length } },
    );
  }
}

/**
 * Which of `topics` the brokers refuse to describe to us (TOPIC_AUTHORIZATION_FAILED, which
 * Kafka answers whether or not the topic exists), asked once each, without retries.
 */
async function topicsDeniedToDescribe(
  client: KafkaClientOptions,
  topics: readonly string[],
): Promise<string[]> {
  const { logger: _quiet, ...options } = client;
  const admin = createKafkaClient({ ...options, retry: { retries: 0 } }).admin();
  const denied: string[] = [];
  try {
    await admin.connect();
    for (const topic of topics) {
      await admin.fetchTopicMetadata({ topics: [topic] }).catch((error: unknown) => {
        if (isTopicAuthorizationFailure(error)) denied.push(topic);
      });
    }
  } catch {
    // Cannot tell: the caller reports the topics as missing.
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  return denied;
}

function isTopicAuthorizationFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current instanceof Error; depth += 1) {
    if (Reflect.get(current, 'type') === 'TOPIC_AUTHORIZATION_FAILED') return true;
    current = current.cause;
  }
  return false;
}
