/**
 * The Kafka ACLs each part of payflow-bridge needs (CONTRACT §9), as data: the secured test
 * bed grants exactly these, the tests prove they are enough, and docs/security.md lists them.
 * Every ACL is ALLOW, host `*`, on a literal resource name.
 */
import { deadLetterTopicFor } from '../dead-letter-headers.js';

export type KafkaAclResourceType = 'topic' | 'group' | 'cluster';
export type KafkaAclOperation =
  'READ' | 'WRITE' | 'CREATE' | 'DESCRIBE' | 'DESCRIBE_CONFIGS' | 'IDEMPOTENT_WRITE';

export interface KafkaAcl {
  readonly resourceType: KafkaAclResourceType;
  /** The topic or group name; `kafka-cluster` for the cluster. */
  readonly resourceName: string;
  readonly operation: KafkaAclOperation;
}

export interface KafkaAclConfig {
  readonly KAFKA_GROUP_ID: string;
  readonly TOPIC_ORDERS: string;
  readonly TOPIC_PAYMENT_STATUS: string;
  readonly TOPIC_SETTLEMENTS: string;
}

const topic = (resourceName: string, operation: KafkaAclOperation): KafkaAcl => ({
  resourceType: 'topic',
  resourceName,
  operation,
});

/**
 * The worker's least privilege: READ on its consumer group; READ, DESCRIBE on the orders
 * topic; WRITE, DESCRIBE on the dead-letter, payment-status and settlements topics. The
 * idempotent producer needs nothing more (Kafka ≥ 3.0 grants IdempotentWrite with WRITE on
 * any topic).
 */
export function workerAcls(config: KafkaAclConfig): KafkaAcl[] {
  return [
    { resourceType: 'group', resourceName: config.KAFKA_GROUP_ID, operation: 'READ' },
    topic(config.TOPIC_ORDERS, 'READ'),
    topic(config.TOPIC_ORDERS, 'DESCRIBE'),
    ...[
      deadLetterTopicFor(config.TOPIC_ORDERS),
      config.TOPIC_PAYMENT_STATUS,
      config.TOPIC_SETTLEMENTS,
    ].flatMap((name) => [topic(name, 'WRITE'), topic(name, 'DESCRIBE')]),
  ];
}

/**
 * `topics create`: CREATE and DESCRIBE on each of the four topics (measured on Kafka 3.9:
 * CREATE alone creates the first topic, then waiting for its leaders is denied). CREATE on
 * the cluster instead of on each topic works too, but allows creating any topic.
 */
export function topicsCreateAcls(config: KafkaAclConfig): KafkaAcl[] {
  return [
    config.TOPIC_ORDERS,
    deadLetterTopicFor(config.TOPIC_ORDERS),
    config.TOPIC_PAYMENT_STATUS,
    config.TOPIC_SETTLEMENTS,
  ].flatMap((name) => [topic(name, 'CREATE'), topic(name, 'DESCRIBE')]);
}

/**
 * `dlq replay`: WRITE and DESCRIBE on the orders topic (the dead letters are read from
 * Postgres, not from the `.dlq` topic; the idempotent producer needs nothing more). Kafka
 * implies DESCRIBE from WRITE; it is listed to say what is used.
 */
export function dlqReplayAcls(config: KafkaAclConfig): KafkaAcl[] {
  return [topic(config.TOPIC_ORDERS, 'WRITE'), topic(config.TOPIC_ORDERS, 'DESCRIBE')];
}

/**
 * `in-doubt resolve`: WRITE and DESCRIBE on the orders topic (the order's dead letters are
 * replayed) and on the payment-status topic (the order's outbox is published: the adopted
 * payment's payment.created).
 */
export function inDoubtResolveAcls(config: KafkaAclConfig): KafkaAcl[] {
  return [config.TOPIC_ORDERS, config.TOPIC_PAYMENT_STATUS].flatMap((name) => [
    topic(name, 'WRITE'),
    topic(name, 'DESCRIBE'),
  ]);
}
