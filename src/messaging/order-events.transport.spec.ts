import { afterEach, describe, expect, it } from '@jest/globals';
import { silentLogger } from '../common/logger.js';
import { orderEventCodec } from '../orders/order-event.codec.js';
import { ORDER_EVENT_TYPES } from '../events/order-event.schema.js';
import type { PartitionConsumer, PartitionConsumerHandlers } from './consumer.port.js';
import { ConsumerStuckError, OrderEventsTransport } from './order-events.transport.js';

/** A consumer-group client that joins and then does whatever the test makes it do. */
class ScriptedConsumer implements PartitionConsumer {
  handlers: PartitionConsumerHandlers | undefined;
  constructor(private readonly onRun: (handlers: PartitionConsumerHandlers) => void = () => {}) {}
  connect(): Promise<void> {
    return Promise.resolve();
  }
  subscribe(): Promise<void> {
    return Promise.resolve();
  }
  run(handlers: PartitionConsumerHandlers): Promise<void> {
    this.handlers = handlers;
    this.onRun(handlers);
    return Promise.resolve();
  }
  pause(): void {}
  resume(): void {}
  commit(): Promise<void> {
    return Promise.resolve();
  }
  disconnect(): Promise<void> {
    return Promise.resolve();
  }
}

const transports: OrderEventsTransport[] = [];

function transportOver(
  consumer: PartitionConsumer,
  stuckAfterMs = 60_000,
  unreachableAfterMs = 10_000,
): OrderEventsTransport {
  const transport = new OrderEventsTransport({
    consumer,
    topic: 'erp.orders.v1',
    codec: orderEventCodec,
    deadLetterSink: { deadLetter: () => Promise.resolve('stored') },
    logger: silentLogger(),
    stuckAfterMs,
    unreachableAfterMs,
    drainTimeoutMs: 10,
    closeStepTimeoutMs: 10,
  });
  for (const type of ORDER_EVENT_TYPES) transport.addHandler(type, () => Promise.resolve(), true);
  transports.push(transport);
  return transport;
}

function start(transport: OrderEventsTransport): Promise<void> {
  return new Promise((resolve, reject) => {
    transport.listen((error?: unknown) => {
      if (error === undefined) resolve();
      else reject(error instanceof Error ? error : new Error('the transport did not start'));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(async () => {
  await Promise.all(transports.splice(0).map((transport) => transport.close()));
});

describe('OrderEventsTransport crash and liveness', () => {
  it('tells a crash listener registered after a crash during start-up, once', async () => {
    const crash = new Error('The session timeout is not within the range allowed by the broker');
    const transport = transportOver(
      new ScriptedConsumer((handlers) => handlers.onCrash(crash, false)),
    );
    await start(transport);
    const heard: Error[] = [];
    transport.on('crash', (error) => heard.push(error));
    await sleep(10);
    expect(heard).toEqual([crash]);
    expect(transport.liveness()).toMatchObject({ alive: false, status: 'crashed' });
  });

  it('does not count a crash that kafkajs restarts from', async () => {
    const transport = transportOver(
      new ScriptedConsumer((handlers) => handlers.onCrash(new Error('broker gone'), true)),
    );
    await start(transport);
    expect(transport.liveness()).toMatchObject({ alive: true, status: 'connected' });
  });

  it('crashes a consumer with no sign of life for stuckAfterMs', async () => {
    const transport = transportOver(new ScriptedConsumer(), 150);
    const heard: Error[] = [];
    transport.on('crash', (error) => heard.push(error));
    await start(transport);
    expect(transport.liveness().alive).toBe(true);
    await sleep(400);
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeInstanceOf(ConsumerStuckError);
    expect(transport.liveness()).toMatchObject({
      alive: false,
      status: 'crashed',
      reason: 'KAFKA.CONSUMER_STUCK',
    });
  });

  it('keeps a consumer alive while it fetches or heartbeats', async () => {
    const consumer = new ScriptedConsumer();
    const transport = transportOver(consumer, 150);
    await start(transport);
    for (let i = 0; i < 8; i++) {
      await sleep(50);
      consumer.handlers?.onProgress?.();
    }
    expect(transport.liveness()).toMatchObject({ alive: true, status: 'connected' });
  });

  it('is not ready while Kafka has not answered for unreachableAfterMs, and ready again after', async () => {
    const consumer = new ScriptedConsumer();
    const transport = transportOver(consumer, 60_000, 100);
    await start(transport);
    expect(transport.readiness()).toMatchObject({ ready: true, status: 'connected' });
    await sleep(200);
    expect(transport.readiness()).toMatchObject({ ready: false, status: 'kafka unreachable' });
    // Still alive: kafkajs reconnects by itself when Kafka is back.
    expect(transport.liveness()).toMatchObject({ alive: true, status: 'connected' });
    consumer.handlers?.onProgress?.();
    expect(transport.readiness()).toMatchObject({ ready: true, status: 'connected' });
  });

  it('is not ready before it is connected or once crashed', async () => {
    const transport = transportOver(
      new ScriptedConsumer((handlers) => handlers.onCrash(new Error('gone'), false)),
    );
    expect(transport.readiness().ready).toBe(false);
    await start(transport);
    await sleep(10);
    expect(transport.readiness()).toMatchObject({ ready: false, status: 'crashed' });
  });
});
