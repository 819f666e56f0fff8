import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { silentLogger } from '../../logging/logger.js';
import { BlockedByEarlierFailureError } from '../../errors/dead-letter.errors.js';
import type { DeadLetter, DeadLetterSink } from '../dead-letter.port.js';
import {
  PayflowRateLimitedError,
  PayflowServerError,
  PayflowValidationError,
} from '../../payflow/payflow.errors.js';
import { orderEventCodec } from '../../orders/order-event.codec.js';
import type { OrderEventContext } from '../../orders/order-event.context.js';
import type { ParsedOrderEnvelope } from '../../events/order-event.schema.js';
import { MessageProcessor, type EventDispatch } from './message-processor.js';
import type { InboundMessage } from '../messaging.ports.js';
import { InMemoryInboundEventsMetrics } from './transport.metrics.js';
import { OrderBusyError } from '../../orders/order.errors.js';

const envelope = (overrides: Record<string, unknown> = {}) => ({
  eventId: randomUUID(),
  type: 'order.cancelled',
  occurredAt: '2026-11-21T10:00:00Z',
  orderId: 'SO-1',
  data: {},
  ...overrides,
});

const message = (value: string | null, key: string | null = 'SO-1'): InboundMessage => ({
  topic: 'erp.orders.v1',
  partition: 3,
  offset: '42',
  key: key === null ? null : Buffer.from(key),
  value: value === null ? null : Buffer.from(value),
  headers: {},
  timestamp: '0',
});

/** The processor as the worker runs it: reading order events (the orders module's codec). */
type OrderEventDispatch = EventDispatch<ParsedOrderEnvelope, OrderEventContext>;

function setup(
  dispatch: OrderEventDispatch,
  sinkFailures = 0,
  retry = { maxAttempts: 3, maxDurationMs: 60_000, baseDelayMs: 1, maxDelayMs: 2 },
) {
  const letters: DeadLetter[] = [];
  let sinkCalls = 0;
  const sink: DeadLetterSink = {
    deadLetter: (letter) => {
      sinkCalls++;
      if (sinkCalls <= sinkFailures) return Promise.reject(new Error('db down'));
      letters.push(letter);
      return Promise.resolve();
    },
  };
  const metrics = new InMemoryInboundEventsMetrics();
  const processor = new MessageProcessor({
    codec: orderEventCodec,
    dispatch,
    deadLetterSink: sink,
    retry,
    sinkRetry: { baseDelayMs: 1, maxDelayMs: 2 },
    logger: silentLogger(),
    metrics,
    random: () => 0.5,
  });
  return { processor, letters, metrics, sinkCalls: () => sinkCalls };
}

const never = new AbortController().signal;
const ok: OrderEventDispatch = () => Promise.resolve();

describe('MessageProcessor', () => {
  it('dead-letters a value that is not JSON, with the key as orderId', async () => {
    const { processor, letters } = setup(ok);
    await expect(processor.process(message('{oops'), never)).resolves.toBe('dead_lettered');
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      reason: 'invalid_json',
      attempts: 1,
      orderId: 'SO-1',
      eventId: null,
      eventType: null,
    });
  });

  it('dead-letters an unknown type and a broken envelope as invalid_event', async () => {
    const { processor, letters } = setup(ok);
    await processor.process(message(JSON.stringify(envelope({ type: 'order.nope' }))), never);
    await processor.process(message(JSON.stringify(envelope({ eventId: 'x' })), null), never);
    expect(letters.map((l) => [l.reason, l.orderId])).toEqual([
      ['invalid_event', 'SO-1'],
      ['invalid_event', null],
    ]);
    expect(letters[0]?.error).toMatch(/unknown event type/);
  });

  it('passes the envelope and a context with the attempt number', async () => {
    const seen: [string, number, string][] = [];
    const { processor } = setup((env, context) => {
      seen.push([env.type, context.getAttempt(), context.getMessage().offset]);
      return Promise.resolve();
    });
    await expect(processor.process(message(JSON.stringify(envelope())), never)).resolves.toBe(
      'succeeded',
    );
    expect(seen).toEqual([['order.cancelled', 1, '42']]);
  });

  it('retries a transient failure and succeeds without a dead letter', async () => {
    let calls = 0;
    const { processor, letters, metrics } = setup(() => {
      calls++;
      if (calls === 1)
        throw new PayflowServerError({
          endpoint: 'cancelPayment',
          method: 'DELETE',
          reached: 'yes',
          status: 503,
        });
      return Promise.resolve();
    });
    await expect(processor.process(message(JSON.stringify(envelope())), never)).resolves.toBe(
      'succeeded',
    );
    expect(calls).toBe(2);
    expect(letters).toHaveLength(0);
    expect(metrics.retries.transient).toBe(1);
  });

  it('dead-letters a permanent Payflow rejection at once', async () => {
    let calls = 0;
    const { processor, letters } = setup(() => {
      calls++;
      return Promise.reject(
        new PayflowValidationError(
          { endpoint: 'createPayment', method: 'POST', reached: 'yes', status: 422 },
          [],
        ),
      );
    });
    await processor.process(
      message(JSON.stringify(envelope({ type: 'order.payment_requested' }))),
      never,
    );
    expect(calls).toBe(1);
    expect(letters[0]).toMatchObject({
      reason: 'rejected_by_payflow',
      attempts: 1,
      eventType: 'order.payment_requested',
    });
  });

  it('dead-letters with the handler reason after earlier transient failures', async () => {
    let calls = 0;
    const { processor, letters } = setup(() => {
      calls++;
      return Promise.reject(
        calls < 2 ? new Error('deadlock') : new BlockedByEarlierFailureError('blocked'),
      );
    });
    await processor.process(message(JSON.stringify(envelope())), never);
    expect(letters[0]).toMatchObject({ reason: 'blocked_by_earlier_failure', attempts: 2 });
  });

  it('gives up after the attempts with retries_exhausted and the last error', async () => {
    let calls = 0;
    const { processor, letters, metrics } = setup(() => {
      calls++;
      return Promise.reject(new Error(`failure ${calls}`));
    });
    await expect(processor.process(message(JSON.stringify(envelope())), never)).resolves.toBe(
      'dead_lettered',
    );
    expect(calls).toBe(3);
    expect(letters[0]).toMatchObject({
      reason: 'retries_exhausted',
      attempts: 3,
      error: 'Error: failure 3',
    });
    expect(metrics.retries.unknown).toBe(2);
    expect(metrics.deadLetters.get('retries_exhausted')).toBe(1);
  });

  it('waits for another worker holding the event without spending its attempts', async () => {
    // The partition's previous owner still holds the attempt (a rebalance): seven busy
    // answers, then one real failure, then success, within a budget of three attempts.
    let calls = 0;
    const { processor, letters, metrics } = setup(() => {
      calls++;
      if (calls <= 7) return Promise.reject(new OrderBusyError('held by worker A'));
      if (calls === 8) return Promise.reject(new Error('connection reset'));
      return Promise.resolve();
    });
    await expect(processor.process(message(JSON.stringify(envelope())), never)).resolves.toBe(
      'succeeded',
    );
    expect(calls).toBe(9);
    expect(letters).toEqual([]);
    expect(metrics.retries.transient).toBe(7);
  });

  it('still dead-letters a wait for another worker that outlasts the duration budget', async () => {
    let now = 0;
    const letters: DeadLetter[] = [];
    const processor = new MessageProcessor({
      codec: orderEventCodec,
      dispatch: () => {
        now += 1_000;
        return Promise.reject(new OrderBusyError('held by worker A'));
      },
      deadLetterSink: {
        deadLetter: (letter) => {
          letters.push(letter);
          return Promise.resolve();
        },
      },
      retry: { maxAttempts: 3, maxDurationMs: 5_000, baseDelayMs: 1, maxDelayMs: 2 },
      sinkRetry: { baseDelayMs: 1, maxDelayMs: 2 },
      logger: silentLogger(),
      metrics: new InMemoryInboundEventsMetrics(),
      random: () => 0.5,
      now: () => now,
    });
    await expect(processor.process(message(JSON.stringify(envelope())), never)).resolves.toBe(
      'dead_lettered',
    );
    expect(letters[0]).toMatchObject({ reason: 'retries_exhausted', attempts: 5 });
  });

  it('honours Retry-After', async () => {
    let calls = 0;
    const { processor } = setup(() => {
      calls++;
      if (calls === 1) {
        throw new PayflowRateLimitedError({
          endpoint: 'cancelPayment',
          method: 'DELETE',
          reached: 'yes',
          status: 429,
          retryAfterMs: 120,
        });
      }
      return Promise.resolve();
    });
    const started = Date.now();
    await processor.process(message(JSON.stringify(envelope())), never);
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
  });

  it('retries a failing sink until it takes the letter', async () => {
    const { processor, letters, sinkCalls } = setup(ok, 2);
    await expect(processor.process(message('nope'), never)).resolves.toBe('dead_lettered');
    expect(sinkCalls()).toBe(3);
    expect(letters).toHaveLength(1);
  });

  it('abandons a back-off wait and a failing sink at shutdown', async () => {
    const controller = new AbortController();
    const { processor } = setup(() => Promise.reject(new Error('down')), 0, {
      maxAttempts: 10,
      maxDurationMs: 600_000,
      baseDelayMs: 60_000,
      maxDelayMs: 60_000,
    });
    const pending = processor.process(message(JSON.stringify(envelope())), controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(pending).resolves.toBe('abandoned');

    const failingSink = setup(ok, 1_000);
    const aborted = new AbortController();
    const sinkPending = failingSink.processor.process(message('nope'), aborted.signal);
    setTimeout(() => aborted.abort(), 20);
    await expect(sinkPending).resolves.toBe('abandoned');
  });

  it('counts a dead letter the sink had already stored (a redelivery) only once', async () => {
    const metrics = new InMemoryInboundEventsMetrics();
    const stored = new Set<string>();
    const sink: DeadLetterSink = {
      deadLetter: ({ message: m }) => {
        const where = `${m.topic}/${m.partition}/${m.offset}`;
        if (stored.has(where)) return Promise.resolve('already_stored');
        stored.add(where);
        return Promise.resolve('stored');
      },
    };
    const processor = new MessageProcessor({
      codec: orderEventCodec,
      dispatch: () => Promise.reject(new BlockedByEarlierFailureError('blocked')),
      deadLetterSink: sink,
      retry: { maxAttempts: 3, maxDurationMs: 60_000, baseDelayMs: 1, maxDelayMs: 2 },
      logger: silentLogger(),
      metrics,
    });
    const value = JSON.stringify(envelope());
    await expect(processor.process(message(value), never)).resolves.toBe('dead_lettered');
    await expect(processor.process(message(value), never)).resolves.toBe('dead_lettered');
    expect(metrics.deadLetters.get('blocked_by_earlier_failure')).toBe(1);
  });
});
