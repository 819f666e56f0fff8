/**
 * Test kit for the outbox relay and the operator CLI: a Database on a per-file test
 * database, a MessageProducer over kafkajs (test files only: production code never imports
 * kafkajs outside src/messaging), a consumer that collects what reached a topic, and a
 * broker outage as a client sees it.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import {
  Kafka,
  logLevel,
  Partitioners,
  type Consumer,
  type ISocketFactory,
  type Producer,
} from 'kafkajs';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../src/database/data-source.js';
import { Database } from '../../src/database/database.js';
import type { MessageProducer, OutboundMessage } from '../../src/messaging/messaging.ports.js';
import { OutboxRepository } from '../../src/outbox/outbox.repository.js';

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

export interface OpenDatabase {
  readonly dataSource: DataSource;
  readonly database: Database;
  close(): Promise<void>;
}

export async function openDatabase(url: string, poolSize = 10): Promise<OpenDatabase> {
  const dataSource = createDataSource({ url, poolSize, applicationName: 'payflow-bridge-test' });
  await dataSource.initialize();
  return {
    dataSource,
    database: new Database(dataSource),
    close: async () => {
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

export function testKafka(
  brokers: string[],
  clientId = 'outbox-test',
  socketFactory?: ISocketFactory,
): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 500 },
    ...(socketFactory === undefined ? {} : { socketFactory }),
  });
}

/**
 * The brokers gone, as one client sees it: begin() resets every open connection and
 * refuses new ones until end(). Every broker of the shared test cluster keeps running for
 * the other files; a client built with `testKafka(brokers, id, outage.socketFactory)`
 * cannot reach any of them meanwhile.
 */
export class BrokerOutage {
  private down = false;
  private readonly open = new Set<net.Socket>();

  readonly socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    if (this.down) {
      const refused = new net.Socket();
      setImmediate(() => refused.destroy(outageError('ECONNREFUSED', host, port)));
      return refused;
    }
    const socket = net.connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    return socket;
  };

  begin(): void {
    this.down = true;
    for (const socket of this.open) {
      socket.destroy(outageError('ECONNRESET', socket.remoteAddress, socket.remotePort));
    }
  }

  end(): void {
    this.down = false;
  }
}

function outageError(code: string, host: string | undefined, port: number | undefined): Error {
  return Object.assign(new Error(`${code} ${host ?? '?'}:${port ?? '?'} (broker outage)`), {
    code,
  });
}

/**
 * The MessageProducer port over a kafkajs producer (acks = all), as the app's: idempotent
 * by default, as real Kafka serves it.
 */
export class KafkajsTestProducer implements MessageProducer {
  readonly producer: Producer;

  constructor(kafka: Kafka, options: { readonly idempotent?: boolean } = {}) {
    this.producer = kafka.producer({
      idempotent: options.idempotent ?? true,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  async send(messages: readonly OutboundMessage[]): Promise<void> {
    const byTopic = new Map<
      string,
      { key: Buffer | string | null; value: Buffer | string; headers: Record<string, string> }[]
    >();
    for (const message of messages) {
      const list = byTopic.get(message.topic) ?? [];
      list.push({ key: message.key, value: message.value, headers: { ...message.headers } });
      byTopic.set(message.topic, list);
    }
    await this.producer.sendBatch({
      acks: -1,
      topicMessages: [...byTopic].map(([topic, list]) => ({ topic, messages: list })),
    });
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}

/** A MessageProducer double: delegates, but fails while `failing` is set. */
export class SwitchableProducer implements MessageProducer {
  failing = false;
  /** When set, the send reaches the broker and THEN fails (a crash after send). */
  failAfterSend = false;
  sends = 0;

  constructor(private readonly inner: MessageProducer) {}

  connect(): Promise<void> {
    return this.inner.connect();
  }

  async send(messages: readonly OutboundMessage[]): Promise<void> {
    this.sends += 1;
    if (this.failing) throw new Error('broker unavailable (test double)');
    await this.inner.send(messages);
    if (this.failAfterSend) throw new Error('lost the acknowledgement (test double)');
  }

  disconnect(): Promise<void> {
    return this.inner.disconnect();
  }
}

export interface Received {
  readonly topic: string;
  readonly partition: number;
  readonly key: string | null;
  readonly value: string;
  readonly headers: Record<string, string>;
}

/** Consumes topics from the beginning into memory. */
export class TopicCollector {
  readonly messages: Received[] = [];
  private readonly consumer: Consumer;

  private constructor(kafka: Kafka) {
    this.consumer = kafka.consumer({
      groupId: `collector-${randomUUID()}`,
      sessionTimeout: 6000,
      heartbeatInterval: 500,
      maxWaitTimeInMs: 100,
    });
  }

  static async start(kafka: Kafka, topics: string[]): Promise<TopicCollector> {
    const collector = new TopicCollector(kafka);
    await collector.consumer.connect();
    await collector.consumer.subscribe({ topics, fromBeginning: true });
    // run() resolves before the group join; the tests start producing at once. Wait for the
    // join (a machine busy with other suites can take seconds), and say why if it crashed.
    const joined = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the collector did not join its group within 60 s')),
        60_000,
      );
      collector.consumer.on(collector.consumer.events.GROUP_JOIN, () => {
        clearTimeout(timer);
        resolve();
      });
      collector.consumer.on(collector.consumer.events.CRASH, (event) => {
        process.stderr.write(`outbox collector crashed: ${String(event.payload.error)}\n`);
      });
    });
    await collector.consumer.run({
      eachMessage: ({ topic, partition, message }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) {
          if (value !== undefined) headers[name] = value.toString();
        }
        collector.messages.push({
          topic,
          partition,
          key: message.key?.toString() ?? null,
          value: message.value?.toString() ?? '',
          headers,
        });
        return Promise.resolve();
      },
    });
    await joined;
    return collector;
  }

  of(topic: string): Received[] {
    return this.messages.filter((message) => message.topic === topic);
  }

  stop(): Promise<void> {
    return this.consumer.disconnect();
  }
}

/** Writes outbox rows the way handlers do: in their own transactions. */
export async function writeOutbox(
  database: Database,
  messages: readonly OutboundMessage[],
): Promise<void> {
  const repository = new OutboxRepository();
  await database.transaction((tx) => repository.add(tx, messages));
}

export async function pendingCount(database: Database): Promise<number> {
  const [row] = await database.sql.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM outbox WHERE published_at IS NULL',
  );
  return row?.count ?? 0;
}
