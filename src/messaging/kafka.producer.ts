/**
 * MessageProducer over kafkajs, set for a real Apache Kafka cluster:
 *
 * - Idempotent (the default): the broker de-duplicates the producer's own retries by
 *   producer id and sequence number, so a retried request cannot write a message twice
 *   within one producer session, and per-partition order holds with up to 5 requests in
 *   flight (kafkajs `maxInFlightRequests` 5, the most idempotence keeps in order).
 * - acks = all (-1): every in-sync replica has the message before send() resolves.
 * - No compression; murmur2 partitioner (same key -> partition as the Java client);
 *   topics are never auto-created (`npx payflow-bridge topics create` makes them).
 *
 * What idempotence does not cover: a process that sends and crashes before it records
 * the send (the outbox relay before marking rows published) sends again from a new
 * session, so downstream still sees at-least-once and dedupes on eventId (CONTRACT §3).
 *
 * `idempotent: false` exists only for librdkafka's mock cluster (the demo), which cannot
 * serve InitProducerId to kafkajs; without it at most one request is in flight, so a
 * retried request still cannot overtake a later one.
 */
import { CompressionTypes, Partitioners, type Message, type Producer } from 'kafkajs';
import { createKafkaClient, type KafkaClientOptions } from './kafka.client.js';
import type { MessageProducer, OutboundMessage } from './messaging.ports.js';

export interface KafkaProducerOptions {
  /**
   * Broker-side de-duplication of retries, order kept with 5 requests in flight. Default
   * true; false only for librdkafka's mock cluster (no InitProducerId for kafkajs).
   */
  readonly idempotent?: boolean;
  /** Time-out for the replicas' acknowledgement. */
  readonly ackTimeoutMs?: number;
}

export class KafkaMessageProducer implements MessageProducer {
  private readonly producer: Producer;
  private readonly ackTimeoutMs: number;

  constructor(client: KafkaClientOptions, options: KafkaProducerOptions = {}) {
    const idempotent = options.idempotent ?? true;
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

  /**
   * Sends in order, in requests of at most SEND_CHUNK_BYTES (a larger message goes alone):
   * kafkajs puts every message of a partition into one record batch, and the broker refuses
   * a batch above the topic's max.message.bytes, so a few dead-lettered documents of one
   * order sent together would be refused forever.
   */
  async send(messages: readonly OutboundMessage[]): Promise<void> {
    for (const chunk of chunksByBytes(messages, SEND_CHUNK_BYTES)) await this.sendChunk(chunk);
  }

  private async sendChunk(messages: readonly OutboundMessage[]): Promise<void> {
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

/** Bytes of messages per produce request (kafkajs' batch.size analogue); see send(). */
export const SEND_CHUNK_BYTES = 1024 * 1024;

const lengthOf = (data: string | Buffer | null): number =>
  data === null ? 0 : typeof data === 'string' ? Buffer.byteLength(data) : data.length;

/** Consecutive runs of `messages` of at most `limit` bytes each (one larger message alone). */
export function chunksByBytes(
  messages: readonly OutboundMessage[],
  limit: number,
): OutboundMessage[][] {
  const chunks: OutboundMessage[][] = [];
  let current: OutboundMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    let size = lengthOf(message.key) + lengthOf(message.value);
    for (const [name, value] of Object.entries(message.headers ?? {})) {
      size += name.length + Buffer.byteLength(value);
    }
    if (current.length > 0 && bytes + size > limit) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export function createKafkaMessageProducer(
  client: KafkaClientOptions,
  options: KafkaProducerOptions = {},
): MessageProducer {
  return new KafkaMessageProducer(client, options);
}
