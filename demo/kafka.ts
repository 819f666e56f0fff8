/**
 * The demo's Kafka clients, as an ERP and a downstream system would have them: a producer
 * of order events (key = order id) and one consumer reading the status, dead-letter and
 * settlements topics from the beginning.
 */
import { Kafka, Partitioners, logLevel, type Consumer, type Producer } from 'kafkajs';
import type { ErpMessage } from './scenario.js';

export const TOPICS = {
  orders: 'erp.orders.v1',
  dlq: 'erp.orders.v1.dlq',
  status: 'payflow.payment-status.v1',
  settlements: 'payflow.settlements.v1',
} as const;

export interface ReceivedMessage {
  readonly topic: string;
  readonly key: string | null;
  readonly value: string;
  readonly headers: Readonly<Record<string, string>>;
}

export function demoKafka(brokers: readonly string[]): Kafka {
  return new Kafka({
    clientId: 'payflow-bridge-demo',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
}

/** Publishes ERP order events; one request, so each order's events keep their order. */
export async function publish(kafka: Kafka, messages: readonly ErpMessage[]): Promise<void> {
  const producer: Producer = kafka.producer({
    // Murmur2, like the Java client an ERP would use (and the worker's own producer).
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  try {
    await producer.send({
      topic: TOPICS.orders,
      acks: -1,
      messages: messages.map((message) => ({ key: message.key, value: message.value })),
    });
  } finally {
    await producer.disconnect();
  }
}

/** Reads the status, dead-letter and settlements topics from the beginning into memory. */
export class Observer {
  readonly messages: ReceivedMessage[] = [];
  private readonly consumer: Consumer;
  private crashed: Error | undefined;

  constructor(kafka: Kafka, groupId: string) {
    this.consumer = kafka.consumer({
      groupId,
      // The mock cluster holds a rebalance for sessionTimeout - 1 s; keep it short.
      sessionTimeout: 6_000,
      heartbeatInterval: 500,
      // disconnect() waits for an open fetch.
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
    });
    this.consumer.on(this.consumer.events.CRASH, (event) => {
      this.crashed = event.payload.error;
    });
  }

  /** Resolves once the consumer runs (the mock cluster's first group join takes ~3 s). */
  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({
      topics: [TOPICS.status, TOPICS.dlq, TOPICS.settlements],
      fromBeginning: true,
    });
    await this.consumer.run({
      eachMessage: ({ topic, message }) => {
        const headers: Record<string, string> = {};
        for (const [name, raw] of Object.entries(message.headers ?? {})) {
          const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
          if (value !== undefined) headers[name] = value.toString();
        }
        this.messages.push({
          topic,
          key: message.key?.toString('utf8') ?? null,
          value: message.value?.toString('utf8') ?? '',
          headers,
        });
        return Promise.resolve();
      },
    });
  }

  /** The consumer's fatal error, if it stopped. */
  get error(): Error | undefined {
    return this.crashed;
  }

  /** Leaves the group; safe at any point after construction. */
  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}
