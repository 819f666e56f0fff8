/**
 * `topics create [--partitions N] [--replication-factor R]`: creates the topics of the
 * configuration that are missing (TOPIC_ORDERS, its .dlq, TOPIC_PAYMENT_STATUS,
 * TOPIC_SETTLEMENTS) and prints one line per topic, what it did. Idempotent: an existing
 * topic is left as it is (and its own partitions and replication factor are printed).
 * Defaults: 12 partitions, replication factor min(3, brokers in the cluster). A new `.dlq`
 * topic keeps its messages (whole ERP events) for RETENTION_PERSONAL_DATA (`retention.ms`).
 */
import { Command, Option, SubCommand } from 'nest-commander';
import {
  checkKafkaAccess,
  kafkaClientOptionsFromConfig,
} from '../../messaging/kafka/kafka.client.js';
import { createKafkaTopicAdmin } from '../../messaging/kafka/kafka.topics.js';
import {
  DEFAULT_TOPIC_PARTITIONS,
  MAX_DEFAULT_REPLICATION_FACTOR,
  createMissingTopics,
  describeTopicOutcome,
  topicSpecs,
} from '../../messaging/kafka/topics.port.js';
import { CliCommand, usage } from './cli-command.js';

/** Kafka's own limit of partitions per topic is far higher; this catches typos. */
const MAX_PARTITIONS = 10_000;
const MAX_REPLICATION_FACTOR = 32_767;

export function parseCount(flag: string, value: string, max: number): number {
  if (!/^\d+$/.test(value.trim())) throw new Error(`${flag} must be a positive whole number`);
  const count = Number(value.trim());
  if (count < 1 || count > max) throw new Error(`${flag} must be between 1 and ${max}`);
  return count;
}

interface CreateOptions {
  readonly partitions?: number;
  readonly replicationFactor?: number;
}

@SubCommand({
  name: 'create',
  description:
    'create the missing topics of the configuration (TOPIC_ORDERS, its .dlq, ' +
    'TOPIC_PAYMENT_STATUS, TOPIC_SETTLEMENTS); existing ones are left as they are',
})
export class TopicsCreateCommand extends CliCommand {
  @Option({
    flags: '--partitions <n>',
    description: `partitions of each new topic (default ${DEFAULT_TOPIC_PARTITIONS})`,
  })
  parsePartitions(value: string): number {
    return usage(() => parseCount('--partitions', value, MAX_PARTITIONS));
  }

  @Option({
    flags: '--replication-factor <r>',
    description: `replicas of each new topic (default: the brokers in the cluster, at most ${MAX_DEFAULT_REPLICATION_FACTOR})`,
  })
  parseReplicationFactor(value: string): number {
    return usage(() => parseCount('--replication-factor', value, MAX_REPLICATION_FACTOR));
  }

  async run(args: string[], options: CreateOptions = {}): Promise<void> {
    this.noExtraArguments(args);
    // kafkajs logs every failed connection attempt as an error; the CLI says what failed in
    // one line instead, and shows kafkajs's own lines only with LOG_LEVEL=debug or trace.
    const kafkaLogger = this.logger.isLevelEnabled('debug') ? this.logger : undefined;
    const client = {
      ...kafkaClientOptionsFromConfig(this.config, kafkaLogger),
      // An operator waits at the terminal: give up on an unreachable Kafka within seconds.
      retry: { retries: 3, initialRetryTimeMs: 300, maxRetryTimeMs: 3_000 },
    };
    const admin = createKafkaTopicAdmin(client);
    try {
      // Refused credentials or TLS: one line saying so (KafkaAccessError), before retries.
      await checkKafkaAccess(client);
      const replicationFactor =
        options.replicationFactor ??
        Math.min(MAX_DEFAULT_REPLICATION_FACTOR, await admin.brokerCount());
      // The .dlq topic gets retention.ms = RETENTION_PERSONAL_DATA (in the config).
      const specs = topicSpecs(this.config, {
        partitions: options.partitions ?? DEFAULT_TOPIC_PARTITIONS,
        replicationFactor,
      });
      const outcomes = await createMissingTopics(admin, specs);
      this.runtime.out(outcomes.map(describeTopicOutcome).join('\n'));
    } catch (error) {
      throw new Error(
        `Kafka (${this.config.KAFKA_BROKERS.join(',')}): ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    } finally {
      await admin.close().catch(() => undefined);
    }
  }
}

@Command({
  name: 'topics',
  description: 'the Kafka topics of the configuration',
  subCommands: [TopicsCreateCommand],
})
export class TopicsCommand extends CliCommand {
  run(args: string[]): Promise<void> {
    this.requireSubcommand(args);
  }
}
