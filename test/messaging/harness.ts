/**
 * Test harness of the inbound-events transport over the Kafka mock cluster: a Nest
 * microservice with a recording controller for every order event type, an in-memory
 * DeadLetterSink, and helpers to produce envelopes and read committed offsets.
 */
import { Controller, Inject, Module, type DynamicModule, type Type } from '@nestjs/common';
import type { INestMicroservice } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { createLogger, silentLogger, type AppLogger } from '../../src/logging/logger.js';
import type { DeadLetter, DeadLetterSink } from '../../src/messaging/dead-letter.port.js';
import { createKafkaPartitionConsumer } from '../../src/messaging/kafka/kafka.consumer.js';
import { createKafkaMessageProducer } from '../../src/messaging/kafka/kafka.producer.js';
import type { MessageProducer, OutboundMessage } from '../../src/messaging/messaging.ports.js';
import { OrderEventContext } from '../../src/orders/order-event.context.js';
import {
  InboundEventsTransport,
  type InboundEventsTransportOptions,
} from '../../src/messaging/transport/inbound-events.transport.js';
import { createInboundEventsMicroservice } from '../../src/messaging/kafka/inbound-events.wiring.js';
import { orderEventCodec } from '../../src/orders/order-event.codec.js';
import {
  ORDER_EVENT_TYPES,
  type ParsedOrderEnvelope,
} from '../../src/events/order-event.schema.js';
import { KafkaMockCluster, mockSafePartitionAssigner } from '../../testbed/kafka/mock-cluster.js';

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

/** Logs of the code under test: silent unless TEST_LOG_LEVEL is set (e.g. debug). */
export function testLogger(): AppLogger {
  const level = process.env['TEST_LOG_LEVEL'];
  return level ? createLogger({ level, name: 'messaging-test' }) : silentLogger();
}

export interface HandledCall {
  readonly member: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string;
  readonly seq: number;
  readonly eventId: string;
  readonly attempt: number;
  readonly startedAt: number;
  endedAt?: number;
  ok?: boolean;
}

export type Behaviour = (
  envelope: ParsedOrderEnvelope,
  context: OrderEventContext,
) => Promise<void>;

/** Records every handler call; the test decides how each one behaves. */
export class Recorder {
  readonly calls: HandledCall[] = [];
  behaviour: Behaviour = () => Promise.resolve();
  active = 0;
  maxActive = 0;
  private readonly activeByPartition = new Map<string, number>();
  readonly maxActiveByPartition = new Map<string, number>();
  private readonly activeKeys = new Map<string, number>();
  /** Times two calls of one key (in one member) overlapped: must stay 0. */
  keyOverlaps = 0;

  async handle(member: string, envelope: ParsedOrderEnvelope, context: OrderEventContext) {
    const message = context.getMessage();
    const data = envelope.data as { seq?: unknown };
    const call: HandledCall = {
      member,
      partition: message.partition,
      offset: message.offset,
      key: envelope.orderId,
      seq: typeof data.seq === 'number' ? data.seq : -1,
      eventId: envelope.eventId,
      attempt: context.getAttempt(),
      startedAt: Date.now(),
    };
    this.calls.push(call);
    const partitionKey = `${member}/${message.partition}`;
    const laneKey = `${member}/${envelope.orderId}`;
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    const inPartition = (this.activeByPartition.get(partitionKey) ?? 0) + 1;
    this.activeByPartition.set(partitionKey, inPartition);
    this.maxActiveByPartition.set(
      partitionKey,
      Math.max(inPartition, this.maxActiveByPartition.get(partitionKey) ?? 0),
    );
    const inLane = (this.activeKeys.get(laneKey) ?? 0) + 1;
    this.activeKeys.set(laneKey, inLane);
    if (inLane > 1) this.keyOverlaps++;
    try {
      await this.behaviour(envelope, context);
      call.ok = true;
    } catch (error) {
      call.ok = false;
      throw error;
    } finally {
      call.endedAt = Date.now();
      this.active--;
      this.activeByPartition.set(partitionKey, (this.activeByPartition.get(partitionKey) ?? 1) - 1);
      this.activeKeys.set(laneKey, (this.activeKeys.get(laneKey) ?? 1) - 1);
    }
  }

  succeeded(): HandledCall[] {
    return this.calls.filter((call) => call.ok === true);
  }
}

export const RECORDER = Symbol('RECORDER');
export const MEMBER = Symbol('MEMBER');

/** One @EventPattern for every order event type, as the real OrdersConsumer declares them. */
@Controller()
export class RecordingController {
  constructor(
    @Inject(RECORDER) private readonly recorder: Recorder,
    @Inject(MEMBER) private readonly member: string,
  ) {}

  @EventPattern([...ORDER_EVENT_TYPES])
  handle(
    @Payload() envelope: ParsedOrderEnvelope,
    @Ctx() context: OrderEventContext,
  ): Promise<void> {
    return this.recorder.handle(this.member, envelope, context);
  }
}

@Module({})
export class RecordingModule {
  static with(
    recorder: Recorder,
    member: string,
    controllers: Type[] = [RecordingController],
  ): DynamicModule {
    return {
      module: RecordingModule,
      controllers,
      providers: [
        { provide: RECORDER, useValue: recorder },
        { provide: MEMBER, useValue: member },
      ],
    };
  }
}

/** A DeadLetterSink double (the real one writes Postgres + outbox). */
export class MemorySink implements DeadLetterSink {
  readonly letters: DeadLetter[] = [];
  failures = 0;
  calls = 0;

  deadLetter(letter: DeadLetter): Promise<void> {
    this.calls++;
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new Error('sink unavailable'));
    }
    this.letters.push(letter);
    return Promise.resolve();
  }

  byKey(key: string): DeadLetter[] {
    return this.letters.filter((letter) => letter.message.key?.toString() === key);
  }
}

export type TestTransportOptions = Partial<
  Omit<InboundEventsTransportOptions, 'consumer' | 'topic' | 'deadLetterSink' | 'logger'>
> & {
  readonly groupId: string;
  readonly topic: string;
  readonly sink: DeadLetterSink;
};

/**
 * The transport with the settings the mock cluster needs, all passed as ordinary options:
 * the mock-safe assigner, a 6 s session, 500 ms heartbeats and a 100 ms fetch wait.
 */
export function mockClusterTransport(
  cluster: KafkaMockCluster,
  options: TestTransportOptions,
): InboundEventsTransport {
  const { groupId, topic, sink, ...rest } = options;
  const logger = testLogger();
  const consumer = createKafkaPartitionConsumer(
    {
      brokers: cluster.brokers,
      clientId: `test-${groupId}`,
      logger,
      retry: { retries: 10, initialRetryTimeMs: 100, maxRetryTimeMs: 1000 },
    },
    {
      groupId,
      sessionTimeoutMs: 6000,
      heartbeatIntervalMs: 500,
      maxWaitTimeInMs: 100,
      partitionAssigners: [mockSafePartitionAssigner()],
    },
  );
  return new InboundEventsTransport({
    consumer,
    topic,
    codec: orderEventCodec,
    deadLetterSink: sink,
    logger,
    commitIntervalMs: 100,
    ...rest,
  });
}

/** A Nest microservice around the transport, listening (the group has been joined). */
export async function startMicroservice(
  transport: InboundEventsTransport,
  recorder: Recorder,
  member: string,
  controllers?: Type[],
): Promise<INestMicroservice> {
  const app = await createInboundEventsMicroservice(
    RecordingModule.with(recorder, member, controllers),
    transport,
    { logger: false },
  );
  await app.listen();
  return app;
}

export interface EventOptions {
  readonly type?: string;
  readonly eventId?: string;
  readonly extra?: Record<string, unknown>;
}

/** An order event envelope for `topic`, keyed by the order id. */
export function orderEvent(
  topic: string,
  orderId: string,
  seq: number,
  options: EventOptions = {},
): OutboundMessage {
  return {
    topic,
    key: orderId,
    value: JSON.stringify({
      eventId: options.eventId ?? randomUUID(),
      type: options.type ?? 'order.cancelled',
      occurredAt: new Date().toISOString(),
      orderId,
      data: { seq },
      ...options.extra,
    }),
  };
}

/** Committed offset per partition (-1 when none). */
export async function committedOffsets(
  admin: Admin,
  groupId: string,
  topic: string,
): Promise<Map<number, number>> {
  const [result] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return new Map((result?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
}

/** High watermark per partition. */
export async function endOffsets(admin: Admin, topic: string): Promise<Map<number, number>> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return new Map(offsets.map((p) => [p.partition, Number(p.high)]));
}

export async function waitForCommittedToReachEnd(
  admin: Admin,
  groupId: string,
  topic: string,
  timeoutMs = 10_000,
): Promise<void> {
  const ends = await endOffsets(admin, topic);
  await waitFor(
    `committed offsets of ${groupId} to reach the end of ${topic}`,
    async () => {
      const committed = await committedOffsets(admin, groupId, topic);
      return [...ends].every(([partition, end]) => {
        const offset = committed.get(partition) ?? -1;
        return offset === end || (end === 0 && offset < 0);
      });
    },
    timeoutMs,
  );
}

/**
 * What every transport test file starts with: the mock cluster with its topics, an admin
 * client (offsets) and a producer. Microservices a test starts go into `apps`; `stop`
 * closes them, then the clients and the cluster.
 */
export interface TransportTestBed {
  readonly cluster: KafkaMockCluster;
  readonly admin: Admin;
  readonly producer: MessageProducer;
  readonly apps: INestMicroservice[];
  stop(): Promise<void>;
}

export async function startTransportTestBed(
  label: string,
  topics: readonly { name: string; partitions: number }[],
): Promise<TransportTestBed> {
  const cluster = await KafkaMockCluster.start({ brokers: 3, topics: [...topics] });
  const admin = new Kafka({
    clientId: `${label}-test-admin`,
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  // The mock cluster cannot serve InitProducerId: the plain producer.
  const producer = createKafkaMessageProducer(
    { brokers: cluster.brokers, clientId: `${label}-test` },
    { idempotent: false },
  );
  await producer.connect();
  const apps: INestMicroservice[] = [];
  return {
    cluster,
    admin,
    producer,
    apps,
    async stop() {
      await Promise.allSettled(apps.map((app) => app.close()));
      await producer.disconnect();
      await admin.disconnect();
      await cluster.stop();
    },
  };
}
