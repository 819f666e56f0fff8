/**
 * MessageProducer over kafkajs: acks from all in-sync replicas (acks = -1), no compression,
 * one request per send() call (messages grouped by topic, order kept within a topic).
 *
 * `idempotent` defaults to false because the test cluster (librdkafka's mock) cannot serve
 * InitProducerId from kafkajs (it asks a controller the mock does not have). Turn it on
 * against real Kafka if you want broker-side de-duplication of producer retries. Without
 * it, at most one request is in flight per broker connection, so a retried request cannot
 * overtake a later one and per-key order holds; a retry after a lost acknowledgement can
 * still duplicate a message (consumers dedupe on eventId, CONTRACT §3).
 */
import { CompressionTypes, Partitioners, type Message, type Producer } from 'kafkajs';
import { createKafkaClient, type KafkaClientOptions } from './kafka.client.js';
import type { MessageProducer, OutboundMessage } from './messaging.ports.js';

export interface KafkaProducerOptions {
  /** Broker-side de-duplication (needs InitProducerId, which the mock cluster lacks). */
  readonly idempotent?: boolean;
  /** Time-out for the replicas' acknowledgement. */
  readonly ackTimeoutMs?: number;
}

export class KafkaMessageProducer implements MessageProducer {
  private readonly producer: Producer;
  private readonly ackTimeoutMs: number;

  constructor(client: KafkaClientOptions, options: KafkaProducerOptions = {}) {
    const idempotent = options.idempotent ?? false;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 30_000;
    this.producer = createKafkaClient(client).producer({
      idempotent,
      // Idempotence keeps order with up to 5 requests in flight; without it, only 1 does.
      maxInFlightRequests: idempotent ? 5 : 1,
      allowAutoTopicCreation: false,
      // Murmur2, like the Java client, so ERP producers and we agree on key -> partition.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  async send(messages: readonly OutboundMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const byTopic = new Map<string, Message[]>();
    for (const message of messages) {
      let list = byTopic.get(message.topic);
      if (list === undefined) {
        list = [];
        byTopic.set(message.topic, list);
      }
      list.push({
        key: message.key,
        value: message.value,
        ...(message.headers === undefined ? {} : { headers: { ...message.headers } }),
      });
    }
    await this.producer.sendBatch({
      topicMessages: [...byTopic].map(([topic, topicMessages]) => ({
        topic,
        messages: topicMessages,
      })),
      acks: -1,
      timeout: this.ackTimeoutMs,
      compression: CompressionTypes.None,
    });
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}

export function createKafkaMessageProducer(
  client: KafkaClientOptions,
  options: KafkaProducerOptions = {},
): MessageProducer {
  return new KafkaMessageProducer(client, options);
}
