/** The CLI's Kafka producer: the worker's (src/messaging), with a shorter retry budget. */
import type { AppLogger } from '../logging/logger.js';
import { checkKafkaAccess, kafkaClientOptionsFromConfig } from '../messaging/kafka/kafka.client.js';
import { createKafkaMessageProducer } from '../messaging/kafka/kafka.producer.js';
import type { MessageProducer } from '../messaging/messaging.ports.js';
import type { CliConfig } from './cli.config.js';

export function createCliProducer(config: CliConfig, logger: AppLogger): MessageProducer {
  // kafkajs logs every failed connection attempt as an error; the CLI says what failed in
  // one line instead, and shows kafkajs's own lines only with LOG_LEVEL=debug or trace.
  const kafkaLogger = logger.isLevelEnabled('debug') ? logger : undefined;
  const client = {
    ...kafkaClientOptionsFromConfig(config, kafkaLogger),
    // An operator waits at the terminal: give up on an unreachable Kafka within seconds.
    retry: { retries: 3, initialRetryTimeMs: 300, maxRetryTimeMs: 3_000 },
  };
  const producer = createKafkaMessageProducer(client, {
    idempotent: config.KAFKA_PRODUCER_IDEMPOTENT,
  });
  return {
    // Refused credentials or TLS say so in one line (KafkaAccessError) before kafkajs retries.
    connect: async () => {
      await checkKafkaAccess(client);
      await producer.connect();
    },
    send: (messages) => producer.send(messages),
    disconnect: () => producer.disconnect(),
  };
}
