/**
 * The inbound-events transport over the Kafka mock cluster (real kafkajs over TCP): per-key
 * order under parallel load, the in-flight limit, commits, dead letters and retries, a slow
 * head-of-line event, heartbeats during a handler slower than the session time-out.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestMicroservice } from '@nestjs/common';
import type { Admin } from 'kafkajs';
import { BlockedByEarlierFailureError } from '../../src/errors/dead-letter.errors.js';
import type { MessageProducer } from '../../src/messaging/messaging.ports.js';
import { InMemoryInboundEventsMetrics } from '../../src/messaging/transport/transport.metrics.js';
import { PayflowServerError, PayflowValidationError } from '../../src/payflow/payflow.errors.js';
import { KafkaMockCluster } from '../../testbed/kafka/mock-cluster.js';
import {
  MemorySink,
  Recorder,
  committedOffsets,
  endOffsets,
  mockClusterTransport,
  orderEvent,
  sleep,
  startMicroservice,
  startTransportTestBed,
  type TransportTestBed,
  waitFor,
  waitForCommittedToReachEnd,
} from './harness.js';

describe('OrderEventsTransport: delivery', () => {
  let bed: TransportTestBed;
  let cluster: KafkaMockCluster;
  let admin: Admin;
  let producer: MessageProducer;
  let apps: INestMicroservice[];

  beforeAll(async () => {
    bed = await startTransportTestBed('delivery', [
      { name: 'orders.load', partitions: 12 },
      { name: 'orders.failures', partitions: 4 },
      { name: 'orders.slow', partitions: 1 },
    ]);
    ({ cluster, admin, producer, apps } = bed);
  });

  afterAll(() => bed?.stop());

  it('keeps per-key order under parallel load, overlaps keys, bounds the in-flight count and commits to the end', async () => {
    const topic = 'orders.load';
    const groupId = 'load';
    const total = 2000;
    const keys = 200;
    const maxInFlight = 64;
    const recorder = new Recorder();
    recorder.behaviour = () => sleep(Math.floor(Math.random() * 8));
    const sink = new MemorySink();
    const metrics = new InMemoryInboundEventsMetrics();
    const transport = mockClusterTransport(cluster, { groupId, topic, sink, maxInFlight, metrics });
    apps.push(await startMicroservice(transport, recorder, 'solo'));

    const messages = Array.from({ length: total }, (_, seq) =>
      orderEvent(topic, `order-${seq % keys}`, seq),
    );
    await producer.send(messages);

    await waitFor(`${total} events handled`, () => recorder.succeeded().length >= total, 30_000);
    await waitForCommittedToReachEnd(admin, groupId, topic);

    const calls = recorder.succeeded();
    expect(calls).toHaveLength(total);
    expect(new Set(calls.map((c) => c.seq)).size).toBe(total);
    expect(sink.letters).toHaveLength(0);

    // Per key: handled in the order published, never two at once.
    const byKey = new Map<string, number[]>();
    for (const call of calls) byKey.set(call.key, [...(byKey.get(call.key) ?? []), call.seq]);
    expect(byKey.size).toBe(keys);
    for (const seqs of byKey.values()) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(recorder.keyOverlaps).toBe(0);

    // Different keys of one partition really ran at the same time.
    expect(Math.max(...recorder.maxActiveByPartition.values())).toBeGreaterThan(1);
    // The limit held (queued + running), it was reached, and fetching went on after it.
    expect(recorder.maxActive).toBeLessThanOrEqual(maxInFlight);
    expect(metrics.maxQueuedPlusInFlight).toBeLessThanOrEqual(maxInFlight);
    expect(transport.stats().waitsForRoom).toBeGreaterThan(0);
    expect(metrics.pauses).toBeGreaterThan(0);

    const ends = await endOffsets(admin, topic);
    expect([...ends.values()].reduce((a, b) => a + b, 0)).toBe(total);
  });

  it('dead-letters invalid messages, retries transient failures and gives up after the budget, while the consumer keeps going', async () => {
    const topic = 'orders.failures';
    const groupId = 'failures';
    const recorder = new Recorder();
    const sink = new MemorySink();
    sink.failures = 2; // the first dead letter's sink write fails twice: retried, not skipped
    const attemptsByEvent = new Map<string, number>();
    recorder.behaviour = (envelope) => {
      const attempts = (attemptsByEvent.get(envelope.eventId) ?? 0) + 1;
      attemptsByEvent.set(envelope.eventId, attempts);
      const init = {
        endpoint: 'cancelPayment' as const,
        method: 'DELETE',
        reached: 'yes' as const,
      };
      switch (envelope.orderId) {
        case 'flaky':
          if (attempts === 1) throw new PayflowServerError({ ...init, status: 503 });
          return Promise.resolve();
        case 'rejected':
          if ((envelope.data as { seq: number }).seq === 0) {
            throw new PayflowValidationError({ ...init, status: 422 }, []);
          }
          // What the real handlers do for later events of a dead-lettered order.
          throw new BlockedByEarlierFailureError('an earlier event of this order is dead-lettered');
        case 'doomed':
          throw new Error(`database connection lost (${attempts})`);
        default:
          return Promise.resolve();
      }
    };
    const transport = mockClusterTransport(cluster, {
      groupId,
      topic,
      sink,
      retry: { maxAttempts: 3, maxDurationMs: 60_000, baseDelayMs: 20, maxDelayMs: 50 },
      sinkRetry: { baseDelayMs: 10, maxDelayMs: 20 },
    });
    apps.push(await startMicroservice(transport, recorder, 'solo'));

    await producer.send([
      { topic, key: 'bad-json', value: '{"eventId": nope', headers: { traceparent: 't-1' } },
      orderEvent(topic, 'unknown-type', 0, { type: 'order.teleported' }),
      orderEvent(topic, 'bad-envelope', 0, { eventId: 'not-a-uuid' }),
      { ...orderEvent(topic, 'other', 0), key: 'wrong-key' },
      orderEvent(topic, 'flaky', 0),
      orderEvent(topic, 'rejected', 0),
      orderEvent(topic, 'rejected', 1),
      orderEvent(topic, 'doomed', 0),
      ...['bad-json', 'unknown-type', 'bad-envelope', 'flaky', 'healthy'].map((key) =>
        orderEvent(topic, key, 1),
      ),
    ]);

    await waitFor('7 dead letters', () => sink.letters.length >= 7, 20_000);
    await waitForCommittedToReachEnd(admin, groupId, topic);

    const reasonOf = (key: string) => sink.byKey(key).map((letter) => letter.reason);
    expect(reasonOf('bad-json')).toEqual(['invalid_json']);
    expect(reasonOf('unknown-type')).toEqual(['invalid_event']);
    expect(reasonOf('bad-envelope')).toEqual(['invalid_event']);
    expect(reasonOf('wrong-key')).toEqual(['invalid_event']);
    expect(reasonOf('rejected')).toEqual(['rejected_by_payflow', 'blocked_by_earlier_failure']);
    expect(reasonOf('doomed')).toEqual(['retries_exhausted']);
    expect(reasonOf('flaky')).toEqual([]);
    expect(sink.letters).toHaveLength(7);
    expect(sink.calls).toBe(9);

    const [exhausted] = sink.byKey('doomed');
    expect(exhausted).toMatchObject({
      attempts: 3,
      orderId: 'doomed',
      eventType: 'order.cancelled',
    });
    expect(exhausted?.error).toBe('Error: database connection lost (3)');
    const [invalid] = sink.byKey('bad-json');
    expect(invalid).toMatchObject({ attempts: 1, orderId: 'bad-json', eventId: null });
    expect(invalid?.message.headers).toEqual({ traceparent: 't-1' });
    expect(invalid?.message.value?.toString()).toBe('{"eventId": nope');
    const [rejected] = sink.byKey('rejected');
    expect(rejected?.attempts).toBe(1);
    expect(rejected?.error).toMatch(/^PAYFLOW.VALIDATION/);

    // The transient failure: two calls, the second one succeeded, nothing dead-lettered.
    const flaky = recorder.calls.filter((c) => c.key === 'flaky' && c.seq === 0);
    expect(flaky.map((c) => [c.attempt, c.ok])).toEqual([
      [1, false],
      [2, true],
    ]);
    // The permanent rejection was not retried.
    expect(recorder.calls.filter((c) => c.key === 'rejected' && c.seq === 0)).toHaveLength(1);
    // The consumer kept going: later events of the same keys were handled.
    for (const key of ['bad-json', 'unknown-type', 'bad-envelope', 'flaky', 'healthy']) {
      expect(recorder.succeeded().some((c) => c.key === key && c.seq === 1)).toBe(true);
    }
  });

  it('lets a slow head-of-line event (slower than the session time-out) hold its partition commit, not other orders, and stays in the group', async () => {
    const topic = 'orders.slow';
    const groupId = 'slow';
    const recorder = new Recorder();
    let releaseSlow: () => void = () => undefined;
    const slowDone = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    recorder.behaviour = (envelope) => (envelope.orderId === 'slow' ? slowDone : Promise.resolve());
    const sink = new MemorySink();
    const transport = mockClusterTransport(cluster, { groupId, topic, sink });
    const assignments: number[] = [];
    transport.on('assignment', (partitions) => assignments.push(partitions.length));
    apps.push(await startMicroservice(transport, recorder, 'solo'));

    await producer.send([
      orderEvent(topic, 'slow', 0),
      orderEvent(topic, 'slow', 1),
      ...Array.from({ length: 50 }, (_, i) => orderEvent(topic, `fast-${i % 10}`, i + 2)),
    ]);

    await waitFor('the fast orders', () => recorder.succeeded().length >= 50, 10_000);
    const started = Date.now();
    // Longer than the 6 s session time-out: the member must not be kicked out meanwhile.
    while (Date.now() - started < 7_000) {
      expect((await committedOffsets(admin, groupId, topic)).get(0)).toBeLessThanOrEqual(0);
      await sleep(1_000);
    }
    expect(recorder.calls.filter((c) => c.key === 'slow').map((c) => c.seq)).toEqual([0]);
    expect(assignments).toEqual([1]); // one join, no rebalance

    releaseSlow();
    await waitForCommittedToReachEnd(admin, groupId, topic);
    expect(
      recorder
        .succeeded()
        .filter((c) => c.key === 'slow')
        .map((c) => c.seq),
    ).toEqual([0, 1]);
    expect(assignments).toEqual([1]);
  });
});
