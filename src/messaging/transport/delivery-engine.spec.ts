import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../logging/logger.js';
import type {
  PartitionConsumer,
  PartitionConsumerHandlers,
  TopicPartition,
  TopicPartitionOffset,
} from './consumer.port.js';
import { DeliveryEngine, messageBytes } from './delivery-engine.js';
import type { InboundMessage } from '../messaging.ports.js';
import { InMemoryInboundEventsMetrics, type ProcessOutcome } from './transport.metrics.js';

const TOPIC = 'orders';

class FakeConsumer implements PartitionConsumer {
  handlers: PartitionConsumerHandlers | undefined;
  readonly paused = new Set<number>();
  readonly resolved = new Map<number, string>();
  readonly commits: TopicPartitionOffset[][] = [];
  disconnected = false;

  constructor(private readonly initial: readonly number[]) {}

  connect(): Promise<void> {
    return Promise.resolve();
  }
  subscribe(): Promise<void> {
    return Promise.resolve();
  }
  run(handlers: PartitionConsumerHandlers): Promise<void> {
    this.handlers = handlers;
    this.assign(this.initial);
    return Promise.resolve();
  }
  assign(partitions: readonly number[]): void {
    this.handlers?.onAssignment(partitions.map((partition) => ({ topic: TOPIC, partition })));
  }
  heartbeats = 0;
  deliver(
    partition: number,
    offsets: readonly number[],
    key: (offset: number) => string | null,
    value: (offset: number) => Buffer = () => Buffer.from('{}'),
  ): Promise<void> {
    if (this.handlers === undefined) throw new Error('not running');
    return this.handlers.onBatch(
      {
        topic: TOPIC,
        partition,
        highWatermark: String((offsets[offsets.length - 1] ?? 0) + 1),
        messages: offsets.map((offset) => message(partition, offset, key(offset), value(offset))),
      },
      {
        resolveOffset: (offset) => {
          this.resolved.set(partition, offset);
        },
        heartbeat: () => {
          this.heartbeats++;
          return Promise.resolve();
        },
      },
    );
  }
  pause(partitions: readonly TopicPartition[]): void {
    for (const { partition } of partitions) this.paused.add(partition);
  }
  resume(partitions: readonly TopicPartition[]): void {
    for (const { partition } of partitions) this.paused.delete(partition);
  }
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    this.commits.push([...offsets]);
    return Promise.resolve();
  }
  disconnect(): Promise<void> {
    this.disconnected = true;
    return Promise.resolve();
  }
  committed(partition: number): string | undefined {
    let last: string | undefined;
    for (const batch of this.commits) {
      for (const offset of batch) if (offset.partition === partition) last = offset.offset;
    }
    return last;
  }
}

function message(
  partition: number,
  offset: number,
  key: string | null,
  value: Buffer = Buffer.from('{}'),
): InboundMessage {
  return {
    topic: TOPIC,
    partition,
    offset: String(offset),
    key: key === null ? null : Buffer.from(key),
    value,
    headers: {},
    timestamp: '0',
  };
}

/** A processor whose calls the test finishes by hand. */
class ManualProcessor {
  readonly calls: { message: InboundMessage; finish: (outcome: ProcessOutcome) => void }[] = [];
  readonly process = (message: InboundMessage): Promise<ProcessOutcome> =>
    new Promise((resolve) => this.calls.push({ message, finish: resolve }));
  finish(offset: number, partition = 0, outcome: ProcessOutcome = 'succeeded'): void {
    const call = this.calls.find(
      (c) => c.message.offset === String(offset) && c.message.partition === partition,
    );
    if (call === undefined) throw new Error(`no call for ${partition}@${offset}`);
    call.finish(outcome);
  }
  offsets(partition = 0): number[] {
    return this.calls
      .filter((c) => c.message.partition === partition)
      .map((c) => Number(c.message.offset));
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function setup(
  maxInFlight: number,
  partitions: readonly number[] = [0],
  sequencing: 'key' | 'partition' = 'key',
  maxInFlightBytes?: number,
) {
  const consumer = new FakeConsumer(partitions);
  const processor = new ManualProcessor();
  const metrics = new InMemoryInboundEventsMetrics();
  const engine = new DeliveryEngine({
    consumer,
    topic: TOPIC,
    process: processor.process,
    maxInFlight,
    ...(maxInFlightBytes === undefined ? {} : { maxInFlightBytes }),
    sequencing,
    commitIntervalMs: 60_000,
    commitEveryCompletions: 1,
    fromBeginning: true,
    logger: silentLogger(),
    metrics,
  });
  await engine.start();
  return { consumer, processor, engine, metrics };
}

describe('DeliveryEngine', () => {
  it('runs keys in parallel, one key in order, and commits the contiguous watermark', async () => {
    const { consumer, processor } = await setup(10);
    await consumer.deliver(0, [0, 1, 2, 3], (o) => (o % 2 === 0 ? 'A' : 'B'));
    expect(processor.offsets()).toEqual([0, 1]);
    processor.finish(1);
    await tick();
    expect(processor.offsets()).toEqual([0, 1, 3]);
    expect(consumer.committed(0)).toBe('0'); // 0 still running
    processor.finish(0);
    await tick();
    expect(consumer.committed(0)).toBe('2');
    processor.finish(2);
    processor.finish(3);
    await tick();
    await tick();
    expect(consumer.committed(0)).toBe('4');
  });

  it('runs one message per partition at a time with partition sequencing', async () => {
    const { consumer, processor } = await setup(10, [0, 1], 'partition');
    await consumer.deliver(0, [0, 1, 2], (o) => `k${o}`);
    await consumer.deliver(1, [0, 1], (o) => (o === 0 ? null : `k${o}`));
    expect(processor.offsets(0)).toEqual([0]);
    expect(processor.offsets(1)).toEqual([0]);
    processor.finish(0, 0);
    await tick();
    expect(processor.offsets(0)).toEqual([0, 1]);
    processor.finish(0, 1);
    await tick();
    expect(processor.offsets(1)).toEqual([0, 1]);
    processor.finish(1, 0);
    await tick();
    expect(processor.offsets(0)).toEqual([0, 1, 2]);
  });

  it('holds at most maxInFlight and waits for room, heartbeating', async () => {
    const { consumer, processor, engine } = await setup(4);
    const delivering = consumer.deliver(0, [0, 1, 2, 3, 4, 5], (o) => `k${o}`);
    await tick();
    expect(processor.offsets()).toEqual([0, 1, 2, 3]);
    expect(consumer.resolved.get(0)).toBe('3');
    processor.finish(0);
    await tick();
    await tick();
    expect(processor.offsets()).toEqual([0, 1, 2, 3, 4]);
    processor.finish(1);
    await delivering;
    expect(processor.offsets()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(consumer.resolved.get(0)).toBe('5');
    expect(engine.stats()).toMatchObject({ waitsForRoom: 2, held: 4 });
    expect(consumer.heartbeats).toBeGreaterThanOrEqual(2);
  });

  describe('byte bound (MAX_IN_FLIGHT_BYTES)', () => {
    const KIB = 1024;
    /** Values of `kib` KiB; keys of 2 bytes (k0..k9): a message costs kib KiB + 2 bytes. */
    const sized =
      (kib: (offset: number) => number) =>
      (offset: number): Buffer =>
        Buffer.alloc(kib(offset) * KIB - 2, 0x61);

    it('counts the bytes of every held message, and gives them back', async () => {
      const { consumer, processor, engine, metrics } = await setup(100, [0], 'key', 100 * KIB);
      await consumer.deliver(
        0,
        [0, 1, 2],
        (o) => `k${o}`,
        sized(() => 10),
      );
      expect(engine.stats()).toMatchObject({ held: 3, heldBytes: 30 * KIB });
      expect(metrics.heldBytesNow).toBe(30 * KIB);
      processor.finish(1);
      await tick();
      expect(engine.stats()).toMatchObject({ held: 2, heldBytes: 20 * KIB });
      processor.finish(0);
      processor.finish(2);
      await tick();
      expect(engine.stats()).toMatchObject({ held: 0, heldBytes: 0, peakHeldBytes: 30 * KIB });
      expect(metrics.maxHeldBytes).toBe(30 * KIB);
    });

    it('costs a message its key, value and headers', () => {
      expect(
        messageBytes({
          ...message(0, 0, 'abc', Buffer.alloc(100)),
          headers: { traceparent: 'x'.repeat(55) },
        }),
      ).toBe(3 + 100 + 'traceparent'.length + 55);
      expect(messageBytes({ ...message(0, 0, null), value: null })).toBe(0);
    });

    it('waits for room when the next message would pass the bound, whatever the count', async () => {
      const { consumer, processor, engine } = await setup(100, [0], 'key', 25 * KIB);
      const delivering = consumer.deliver(
        0,
        [0, 1, 2, 3],
        (o) => `k${o}`,
        sized(() => 10),
      );
      await tick();
      // 10 + 10 fit, a third 10 would make 30 > 25.
      expect(processor.offsets()).toEqual([0, 1]);
      expect(consumer.resolved.get(0)).toBe('1');
      processor.finish(0);
      await tick();
      await tick();
      expect(processor.offsets()).toEqual([0, 1, 2]);
      processor.finish(1);
      processor.finish(2);
      await delivering;
      expect(processor.offsets()).toEqual([0, 1, 2, 3]);
      expect(engine.stats().peakHeldBytes).toBeLessThanOrEqual(25 * KIB);
      expect(engine.stats().waitsForRoom).toBe(2);
    });

    it('admits one message larger than the bound when nothing else is held', async () => {
      const { consumer, processor, engine } = await setup(100, [0], 'key', 8 * KIB);
      const sizes = [4, 40, 4, 4];
      const delivering = consumer.deliver(
        0,
        [0, 1, 2, 3],
        (o) => `k${o}`,
        sized((o) => sizes[o] ?? 0),
      );
      await tick();
      // The 40 KiB message waits until the 4 KiB one before it is done...
      expect(processor.offsets()).toEqual([0]);
      processor.finish(0);
      await tick();
      await tick();
      // ...then runs alone: nothing else may join it.
      expect(processor.offsets()).toEqual([0, 1]);
      expect(engine.stats()).toMatchObject({ held: 1, heldBytes: 40 * KIB });
      processor.finish(1);
      await tick();
      await tick();
      processor.finish(2);
      processor.finish(3);
      await delivering;
      expect(processor.offsets()).toEqual([0, 1, 2, 3]);
      expect(engine.stats()).toMatchObject({ heldBytes: 0, peakHeldBytes: 40 * KIB });
    });

    it('gives back the bytes of queued work dropped on revocation and at stop', async () => {
      const { consumer, processor, engine } = await setup(100, [0, 1], 'key', 1_000 * KIB);
      await consumer.deliver(
        0,
        [0, 1, 2],
        () => 'kk',
        sized(() => 10),
      );
      await consumer.deliver(
        1,
        [0, 1],
        () => 'kk',
        sized(() => 20),
      );
      expect(engine.stats()).toMatchObject({ held: 5, heldBytes: 70 * KIB });
      consumer.assign([1]); // partition 0 revoked: its two queued messages are dropped
      expect(engine.stats()).toMatchObject({ held: 3, heldBytes: 50 * KIB });
      const stopping = engine.stop({ drainTimeoutMs: 1_000, commitTimeoutMs: 100 });
      await tick();
      expect(engine.stats()).toMatchObject({ held: 2, heldBytes: 30 * KIB });
      processor.finish(0, 0);
      processor.finish(0, 1);
      await stopping;
      expect(engine.stats()).toMatchObject({ held: 0, heldBytes: 0 });
    });
  });

  it('passes a failing heartbeat (rebalance) back to the client', async () => {
    const { consumer, processor } = await setup(1);
    const rebalance = new Error('The group is rebalancing');
    const handlers = consumer.handlers as PartitionConsumerHandlers;
    const delivering = handlers.onBatch(
      {
        topic: TOPIC,
        partition: 0,
        highWatermark: '2',
        messages: [message(0, 0, 'A'), message(0, 1, 'B')],
      },
      { resolveOffset: () => undefined, heartbeat: () => Promise.reject(rebalance) },
    );
    await tick();
    processor.finish(0);
    await expect(delivering).rejects.toBe(rebalance);
  });

  it('leaves a batch waiting for room when stopping', async () => {
    const { consumer, processor, engine } = await setup(1);
    const delivering = consumer.deliver(0, [0, 1], (o) => `k${o}`);
    await tick();
    const stopping = engine.stop({ drainTimeoutMs: 5_000, commitTimeoutMs: 1_000 });
    await delivering;
    processor.finish(0);
    await stopping;
    expect(processor.offsets()).toEqual([0]);
    expect(consumer.paused.has(0)).toBe(true);
    expect(consumer.committed(0)).toBe('1');
  });

  it('skips messages fetched again after a rebalance that kept the partition', async () => {
    const { consumer, processor, engine } = await setup(100);
    await consumer.deliver(0, [0, 1, 2], () => 'A');
    processor.finish(0);
    await tick();
    consumer.assign([0, 1]);
    await consumer.deliver(0, [0, 1, 2, 3], () => 'A');
    expect(engine.stats().duplicatesSkipped).toBe(3);
    expect(consumer.resolved.get(0)).toBe('3');
    processor.finish(1);
    await tick();
    processor.finish(2);
    await tick();
    processor.finish(3);
    await tick();
    expect(processor.offsets()).toEqual([0, 1, 2, 3]);
    expect(consumer.committed(0)).toBe('4');
  });

  it('drops queued work of a revoked partition and does not commit it', async () => {
    const { consumer, processor, engine } = await setup(100, [0, 1]);
    await consumer.deliver(0, [0, 1, 2], () => 'A');
    await consumer.deliver(1, [0], () => 'B');
    consumer.assign([1]);
    expect(engine.stats()).toMatchObject({ held: 2, queued: 0, running: 2 });
    processor.finish(0, 0);
    await tick();
    expect(processor.offsets(0)).toEqual([0]);
    expect(consumer.committed(0)).toBeUndefined();
    // A batch of the revoked partition still in the client's pipeline is ignored.
    await consumer.deliver(0, [3], () => 'A');
    expect(processor.offsets(0)).toEqual([0]);
  });

  it('keeps per-key order behind work still running when a partition comes back', async () => {
    const { consumer, processor } = await setup(100, [0]);
    await consumer.deliver(0, [0, 1], () => 'A');
    consumer.assign([]);
    consumer.assign([0]);
    await consumer.deliver(0, [0, 1], () => 'A'); // redelivered: a new tracker, offset 0 still running
    expect(processor.offsets()).toEqual([0]);
    processor.finish(0);
    await tick();
    expect(processor.offsets()).toEqual([0, 0]);
  });

  it('stops: no new work, running work finishes, the watermark is committed', async () => {
    const { consumer, processor, engine } = await setup(100);
    await consumer.deliver(0, [0, 1, 2, 3], (o) => (o === 1 ? 'A' : o === 0 ? 'A' : `k${o}`));
    // Running: 0 (A), 2, 3. Queued: 1 (behind 0).
    const stopping = engine.stop({ drainTimeoutMs: 5_000, commitTimeoutMs: 1_000 });
    processor.finish(0);
    processor.finish(3);
    processor.finish(2);
    const report = await stopping;
    expect(report).toMatchObject({ unfinished: 0, abandoned: 1 });
    expect(processor.offsets()).toEqual([0, 2, 3]);
    expect(consumer.committed(0)).toBe('1');
    expect(consumer.disconnected).toBe(true);
  });

  it('stops after the drain time even when a handler hangs', async () => {
    const { consumer, processor, engine } = await setup(100);
    await consumer.deliver(0, [0, 1], (o) => `k${o}`);
    processor.finish(1);
    const report = await engine.stop({ drainTimeoutMs: 50, commitTimeoutMs: 1_000 });
    expect(report.unfinished).toBe(1);
    expect(consumer.committed(0)).toBe('0');
  });
});
