import { afterEach, describe, expect, it } from '@jest/globals';
import type { MessageHandler } from '@nestjs/microservices';
import { randomUUID } from 'node:crypto';
import { map, timer } from 'rxjs';
import { silentLogger } from '../../logging/logger.js';
import { orderEventCodec } from '../../orders/order-event.codec.js';
import { ORDER_EVENT_TYPES } from '../../events/order-event.schema.js';
import type { PartitionConsumer, PartitionConsumerHandlers } from './consumer.port.js';
import {
  ConsumerStuckError,
  ORDER_EVENTS_TRANSPORT,
  InboundEventsTransport,
} from './inbound-events.transport.js';

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

const transports: InboundEventsTransport[] = [];

function transportOver(
  consumer: PartitionConsumer,
  stuckAfterMs = 60_000,
  unreachableAfterMs = 10_000,
  handler: MessageHandler = () => Promise.resolve(),
  types: readonly string[] = ORDER_EVENT_TYPES,
): InboundEventsTransport {
  const transport = new InboundEventsTransport({
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
  for (const type of types) transport.addHandler(type, handler, true);
  transports.push(transport);
  return transport;
}

function start(transport: InboundEventsTransport): Promise<void> {
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

/** Hands the transport one valid `order.cancelled` event, as kafkajs would. */
function deliverCancelled(consumer: ScriptedConsumer): Promise<void> {
  const envelope = {
    eventId: randomUUID(),
    type: 'order.cancelled',
    occurredAt: '2026-11-21T10:00:00Z',
    orderId: 'SO-1',
    data: {},
  };
  const handlers = consumer.handlers;
  if (handlers === undefined) throw new Error('the consumer is not running');
  handlers.onAssignment([{ topic: 'erp.orders.v1', partition: 0 }]);
  return handlers.onBatch(
    {
      topic: 'erp.orders.v1',
      partition: 0,
      highWatermark: '1',
      messages: [
        {
          topic: 'erp.orders.v1',
          partition: 0,
          offset: '0',
          key: Buffer.from('SO-1'),
          value: Buffer.from(JSON.stringify(envelope)),
          headers: {},
          timestamp: '0',
        },
      ],
    },
    { resolveOffset: () => undefined, heartbeat: () => Promise.resolve() },
  );
}

describe("OrderEventsTransport on the public API of Nest's Server", () => {
  it('reports each status on `status`, what microservice.status shows', async () => {
    const transport = transportOver(new ScriptedConsumer());
    const seen: string[] = [];
    const subscription = transport.status.subscribe((status) => seen.push(status));
    await start(transport);
    await transport.close();
    subscription.unsubscribe();
    expect(seen).toEqual(['idle', 'connecting', 'connected', 'draining', 'closed']);
  });

  it('refuses to start when a registered handler is missing (getHandlers)', async () => {
    const transport = transportOver(new ScriptedConsumer(), 60_000, 10_000, undefined, [
      'order.cancelled',
    ]);
    await expect(start(transport)).rejects.toThrow(/no handler for order\.payment_requested/);
  }, 10_000);

  it('runs the registered handler between the processing hooks and waits for its stream', async () => {
    const steps: string[] = [];
    let ended: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const consumer = new ScriptedConsumer();
    const transport = transportOver(consumer, 60_000, 10_000, (payload: { type: string }) => {
      steps.push(`handler ${payload.type}`);
      return Promise.resolve(timer(20).pipe(map(() => steps.push('stream done'))));
    });
    transport.setOnProcessingStartHook((transportId, _context, done) => {
      steps.push(transportId === ORDER_EVENTS_TRANSPORT ? 'start' : 'start (other transport)');
      void done();
    });
    transport.setOnProcessingEndHook(() => {
      steps.push('end');
      ended();
    });
    await start(transport);
    await deliverCancelled(consumer);
    await finished;
    expect(steps).toEqual(['start', 'handler order.cancelled', 'stream done', 'end']);
  }, 10_000);
});
