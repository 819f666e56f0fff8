/**
 * The worker's topics (CONTRACT §1, §8): which must exist, the start-up check, and
 * `topics create`. kafka.topics.ts implements the TopicAdmin port over kafkajs; what is here
 * knows no client library, so it is tested without a broker.
 */
import { AppError } from '../../errors/app-error.js';
import { deadLetterTopicFor } from '../dead-letter-headers.js';

/** A topic as the cluster describes it. */
export interface TopicDescription {
  readonly name: string;
  readonly partitions: number;
  readonly replicationFactor: number;
}

/** A topic to create. */
export interface TopicSpec extends TopicDescription {
  /** Topic-level configuration, e.g. `max.message.bytes`. */
  readonly config: Readonly<Record<string, string>>;
}

/** The cluster operations the worker and `topics create` need. */
export interface TopicAdmin {
  /** The named topics that exist (missing ones are left out). */
  describe(names: readonly string[]): Promise<readonly TopicDescription[]>;
  /** Brokers in the cluster now. */
  brokerCount(): Promise<number>;
  /** Creates the topics; false for one that someone else created meanwhile. */
  create(specs: readonly TopicSpec[]): Promise<ReadonlyMap<string, boolean>>;
  close(): Promise<void>;
}

export interface TopicsConfig {
  readonly TOPIC_ORDERS: string;
  readonly TOPIC_PAYMENT_STATUS: string;
  readonly TOPIC_SETTLEMENTS: string;
  /**
   * How long personal data is kept (ms): the `.dlq` topic's `retention.ms`, since its
   * messages are whole ERP events (docs/privacy.md). Unset: the broker's default.
   */
  readonly RETENTION_PERSONAL_DATA?: number;
}

/** Every topic the worker reads or writes, in the order they are reported. */
export function requiredTopics(config: TopicsConfig): string[] {
  return [
    config.TOPIC_ORDERS,
    deadLetterTopicFor(config.TOPIC_ORDERS),
    config.TOPIC_PAYMENT_STATUS,
    config.TOPIC_SETTLEMENTS,
  ];
}

/**
 * Largest message the input and dead-letter topics accept (their `max.message.bytes`):
 * an `order.document_attached` carries the document in base64 (4/3 of its size), and
 * Payflow takes documents up to 10 MiB in the sandbox's reading; 16 MiB covers that with
 * the envelope and the dead-letter headers. Set on the topic, it holds whatever the
 * brokers' `message.max.bytes` (default 1 MiB) says.
 */
export const LARGE_TOPIC_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export const DEFAULT_TOPIC_PARTITIONS = 12;
export const MAX_DEFAULT_REPLICATION_FACTOR = 3;

/** The specs `topics create` uses for the configuration's topics. */
export function topicSpecs(
  config: TopicsConfig,
  options: { readonly partitions: number; readonly replicationFactor: number },
): TopicSpec[] {
  const large = { 'max.message.bytes': String(LARGE_TOPIC_MAX_MESSAGE_BYTES) };
  const retention = config.RETENTION_PERSONAL_DATA;
  // The dead-letter copies hold whole ERP events: kept no longer than personal data is.
  const deadLetters =
    retention === undefined ? large : { ...large, 'retention.ms': String(retention) };
  return requiredTopics(config).map((name, index) => ({
    name,
    partitions: options.partitions,
    replicationFactor: options.replicationFactor,
    // The input and its dead-letter copy carry whole documents; the outputs do not.
    config: index === 0 ? large : index === 1 ? deadLetters : {},
  }));
}

/** Start-up refused: topics of the configuration do not exist (auto-creation is off). */
export class TopicsMissingError extends AppError {
  readonly code = 'kafka.topics_missing';
  readonly transient = false;

  constructor(readonly topics: readonly string[]) {
    super(`topics missing: ${topics.join(', ')}`, {
      metadata: { topics: topics.join(','), count: topics.length },
    });
  }

  /** One line per missing topic, as the worker prints them before exiting. */
  lines(): string[] {
    return this.topics.map(
      (topic) => `topic ${topic} does not exist (create it: npx payflow-bridge topics create)`,
    );
  }
}

/** Rejects with TopicsMissingError naming every topic of `names` that does not exist. */
export async function assertTopicsExist(
  admin: TopicAdmin,
  names: readonly string[],
): Promise<void> {
  const existing = new Set((await admin.describe(names)).map((topic) => topic.name));
  const missing = names.filter((name) => !existing.has(name));
  if (missing.length > 0) throw new TopicsMissingError(missing);
}

export interface TopicOutcome extends TopicDescription {
  readonly action: 'created' | 'exists';
}

/**
 * Creates what is missing of `specs` and describes every topic afterwards. Idempotent: a
 * topic that exists (or that another process created meanwhile) is left as it is.
 */
export async function createMissingTopics(
  admin: TopicAdmin,
  specs: readonly TopicSpec[],
): Promise<TopicOutcome[]> {
  const names = specs.map((spec) => spec.name);
  const before = new Set((await admin.describe(names)).map((topic) => topic.name));
  const missing = specs.filter((spec) => !before.has(spec.name));
  const created = missing.length > 0 ? await admin.create(missing) : new Map<string, boolean>();
  const after = new Map((await admin.describe(names)).map((topic) => [topic.name, topic]));
  return specs.map((spec) => {
    const described = after.get(spec.name);
    const action = created.get(spec.name) === true ? 'created' : 'exists';
    return described === undefined
      ? { ...spec, action }
      : {
          name: spec.name,
          partitions: described.partitions,
          replicationFactor: described.replicationFactor,
          action,
        };
  });
}

/** `created erp.orders.v1 (12 partitions, replication factor 3)`. */
export function describeTopicOutcome(outcome: TopicOutcome): string {
  const partitions = `${outcome.partitions} partition${outcome.partitions === 1 ? '' : 's'}`;
  return `${outcome.action} ${outcome.name} (${partitions}, replication factor ${outcome.replicationFactor})`;
}
