/**
 * The benchmark's load and its observer: ERP `order.payment_requested` events (several
 * per order, interleaved at random the way many dealers' ERPs would send them), a producer
 * that sends them at once or at a fixed rate, and a reader of the payment status and
 * dead-letter topics that notes when each event's `payment.created` arrived.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, Partitioners, logLevel, type Consumer, type Producer } from 'kafkajs';
import { prng } from '../../testbed/order-load.js';
import { nearestRank } from '../percentile.js';

export interface BenchEvent {
  readonly eventId: string;
  readonly orderId: string;
  readonly value: string;
}

function isoDay(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * `orders` orders with `perOrder` payment requests each (every one a new payment), in a
 * random interleaving that keeps each order's own events in order.
 */
export function paymentRequests(options: {
  readonly prefix: string;
  readonly orders: number;
  readonly perOrder: number;
  readonly seed: number;
}): BenchEvent[] {
  const slots: number[] = [];
  for (let order = 0; order < options.orders; order++) {
    for (let n = 0; n < options.perOrder; n++) slots.push(order);
  }
  const random = prng(options.seed);
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const swap = slots[i] as number;
    slots[i] = slots[j] as number;
    slots[j] = swap;
  }
  const dueDate = isoDay(14);
  const sent = new Map<number, number>();
  return slots.map((order) => {
    const n = (sent.get(order) ?? 0) + 1;
    sent.set(order, n);
    const orderId = `${options.prefix}-${order}`;
    const eventId = randomUUID();
    const envelope = {
      eventId,
      type: 'order.payment_requested',
      occurredAt: new Date().toISOString(),
      organizationId: 'org-1',
      orderId,
      data: {
        orderNumber: `ON-${order}`,
        customer: {
          type: 'person',
          firstName: 'Kari',
          lastName: 'Nordmann',
          email: 'kari@example.com',
          phone: { countryCode: '+47', number: '41234567' },
          customerNumber: `C-${order}`,
          billingAddress: {
            street: 'Storgata 1',
            postalCode: '0155',
            city: 'Oslo',
            countryCode: 'NO',
          },
        },
        serviceAdvisorEmail: 'advisor@dealer.example',
        vehicles: [
          {
            role: 'new',
            numberPlate: 'EV12345',
            brand: 'Volvo',
            model: 'EX30',
            year: 2026,
            vin: 'YV1ABCDEF12345678',
          },
        ],
        currency: 'NOK',
        lines: [
          {
            description: `Service package ${n}`,
            quantity: 1,
            unitPriceNet: '1000.00',
            taxRate: 25,
          },
          { description: 'Tyre hotel', quantity: 4, unitPriceNet: '125.00', taxRate: 25 },
        ],
        dueDate,
      },
    };
    return { eventId, orderId, value: JSON.stringify(envelope) };
  });
}

/** BENCH_WORKER_ENV="K=V,K=V": more worker variables, to compare settings. */
export function extraWorkerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of (process.env.BENCH_WORKER_ENV ?? '').split(',')) {
    const index = pair.indexOf('=');
    if (index > 0) env[pair.slice(0, index).trim()] = pair.slice(index + 1).trim();
  }
  return env;
}

export function benchKafka(brokers: readonly string[], clientId: string): Kafka {
  return new Kafka({ clientId, brokers: [...brokers], logLevel: logLevel.NOTHING });
}

/** Sends ERP events keyed by order id (murmur2: Kafka's default partitioner). */
export class EventProducer {
  /** performance.now() just before the send of each event. */
  readonly producedAt = new Map<string, number>();

  private constructor(
    private readonly producer: Producer,
    private readonly topic: string,
  ) {}

  static async start(kafka: Kafka, topic: string): Promise<EventProducer> {
    const producer = kafka.producer({
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    return new EventProducer(producer, topic);
  }

  /** Sends everything as fast as the cluster takes it. */
  async sendAll(events: readonly BenchEvent[], chunk = 1_000): Promise<void> {
    for (let i = 0; i < events.length; i += chunk) await this.send(events.slice(i, i + chunk));
  }

  /** Sends `events` at `perSecond`, in small sends every ~10 ms. */
  async sendPaced(events: readonly BenchEvent[], perSecond: number): Promise<void> {
    const started = performance.now();
    let next = 0;
    while (next < events.length) {
      const due = Math.min(
        events.length,
        Math.floor(((performance.now() - started) / 1000) * perSecond) + 1,
      );
      if (due > next) {
        const slice = events.slice(next, due);
        next = due;
        await this.send(slice);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async stop(): Promise<void> {
    await this.producer.disconnect();
  }

  private async send(events: readonly BenchEvent[]): Promise<void> {
    const now = performance.now();
    for (const event of events) this.producedAt.set(event.eventId, now);
    await this.producer.send({
      topic: this.topic,
      acks: -1,
      messages: events.map((event) => ({ key: event.orderId, value: event.value })),
    });
  }
}

/** Reads the status and dead-letter topics from the beginning and notes arrival times. */
export class StatusReader {
  /** payment.created by source event id: performance.now() of its first arrival. */
  readonly created = new Map<string, number>();
  duplicates = 0;
  deadLetters = 0;
  readonly otherTypes = new Map<string, number>();
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly consumer: Consumer,
    private readonly statusTopic: string,
  ) {}

  static async start(kafka: Kafka, statusTopic: string, dlqTopic: string): Promise<StatusReader> {
    const consumer = kafka.consumer({
      groupId: `bench-reader-${randomUUID()}`,
      sessionTimeout: 6_000,
      heartbeatInterval: 500,
      maxWaitTimeInMs: 50,
    });
    const reader = new StatusReader(consumer, statusTopic);
    await consumer.connect();
    await consumer.subscribe({ topics: [statusTopic, dlqTopic], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        const at = performance.now();
        if (batch.topic === statusTopic) {
          for (const message of batch.messages) reader.onStatus(message.value, at);
        } else {
          reader.deadLetters += batch.messages.length;
        }
        reader.wake();
        await Promise.resolve();
      },
    });
    return reader;
  }

  get statusTopicName(): string {
    return this.statusTopic;
  }

  /** Resolves once `done()` holds or at `deadline` (performance.now()); true when done. */
  async waitFor(done: () => boolean, deadline: number): Promise<boolean> {
    while (!done()) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return true;
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }

  private onStatus(value: Buffer | null, at: number): void {
    if (value === null) return;
    const event = JSON.parse(value.toString('utf8')) as {
      type?: string;
      data?: { sourceEventId?: string };
    };
    const type = event.type ?? '?';
    const source = event.data?.sourceEventId;
    if (type !== 'payment.created' || source === undefined) {
      this.otherTypes.set(type, (this.otherTypes.get(type) ?? 0) + 1);
      return;
    }
    if (this.created.has(source)) this.duplicates++;
    else this.created.set(source, at);
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}

/** Nearest-rank percentiles of `values` (ms), rounded to 0.1 ms. */
export function percentiles(values: readonly number[]): {
  p50: number;
  p95: number;
  p99: number;
  max: number;
} {
  if (values.length === 0) return { p50: 0, p95: 0, p99: 0, max: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (fraction: number): number => Math.round(nearestRank(sorted, fraction) * 10) / 10;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: at(1) };
}
