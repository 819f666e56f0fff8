/** Sends bench events at a steady rate in the background until stopped. */
import type { Kafka, Producer } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { BenchEvent } from '../pipeline/load.js';

export class PacedSender {
  /** Event ids sent so far. */
  readonly sent: BenchEvent[] = [];
  failedSends = 0;
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();

  private constructor(
    private readonly producer: Producer,
    private readonly topic: string,
  ) {}

  static async start(kafka: Kafka, topic: string): Promise<PacedSender> {
    const producer = kafka.producer({
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    return new PacedSender(producer, topic);
  }

  /** Sends `next()` events at `perSecond` (every 20 ms a slice) until stop(). */
  run(perSecond: number, next: (count: number) => BenchEvent[]): void {
    this.loop = (async () => {
      const started = performance.now();
      let due = 0;
      while (!this.stopped) {
        const target = Math.floor(((performance.now() - started) / 1000) * perSecond);
        if (target > due) {
          const events = next(target - due);
          due = target;
          try {
            await this.producer.send({
              topic: this.topic,
              acks: -1,
              messages: events.map((event) => ({ key: event.orderId, value: event.value })),
            });
            this.sent.push(...events);
          } catch {
            this.failedSends++;
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await this.producer.disconnect();
  }
}
