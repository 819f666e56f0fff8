/**
 * Life cycle of the inbound-events transport over the Kafka mock cluster: the handler
 * registry check at start-up, a graceful close with handlers in flight, and a rebalance
 * when a second member joins the group mid-stream.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import type { Admin } from 'kafkajs';
import type { MessageProducer } from '../../src/messaging/messaging.ports.js';
import { ORDER_EVENT_TYPES } from '../../src/events/order-event.schema.js';
import { KafkaMockCluster } from '../../testbed/kafka/mock-cluster.js';
import {
  MemorySink,
  Recorder,
  RecordingController,
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
  type HandledCall,
} from './harness.js';

@Controller()
class PartialController {
  @EventPattern(ORDER_EVENT_TYPES.filter((type) => type !== 'order.marked_paid'))
  handle(@Payload() _envelope: unknown): Promise<void> {
    return Promise.resolve();
  }
}

@Controller()
class DuplicateCancelController {
  @EventPattern('order.cancelled')
  handle(@Payload() _envelope: unknown): Promise<void> {
    return Promise.resolve();
  }
}

@Controller()
class UnknownPatternController {
  @EventPattern('order.teleported')
  handle(@Payload() _envelope: unknown): Promise<void> {
    return Promise.resolve();
  }
}

describe('OrderEventsTransport: life cycle', () => {
  let bed: TransportTestBed;
  let cluster: KafkaMockCluster;
  let admin: Admin;
  let producer: MessageProducer;
  let apps: INestMicroservice[];

  beforeAll(async () => {
    bed = await startTransportTestBed('lifecycle', [
      { name: 'orders.registry', partitions: 1 },
      { name: 'orders.close', partitions: 3 },
      { name: 'orders.rebalance', partitions: 6 },
    ]);
    ({ cluster, admin, producer, apps } = bed);
  });

  afterAll(() => bed?.stop());

  it.each([
    [[PartialController], /no handler for order\.marked_paid/],
    [
      [RecordingController, DuplicateCancelController],
      /more than one handler for order\.cancelled/,
    ],
    [[RecordingController, UnknownPatternController], /unknown event types order\.teleported/],
  ])('refuses to start with a bad handler registry (%#)', async (controllers, message) => {
    const sink = new MemorySink();
    const transport = mockClusterTransport(cluster, {
      groupId: 'registry',
      topic: 'orders.registry',
      sink,
    });
    const started = startMicroservice(transport, new Recorder(), 'solo', controllers);
    await expect(started).rejects.toThrow(message);
    expect(transport.currentStatus).toBe('idle');
    await transport.close(); // idempotent and harmless after a refused start
    await transport.close();
  });

  it('closes gracefully: running handlers finish, queued work is left, the commit covers exactly what finished', async () => {
    const topic = 'orders.close';
    const groupId = 'close';
    const recorder = new Recorder();
    recorder.behaviour = () => sleep(800);
    const sink = new MemorySink();
    const transport = mockClusterTransport(cluster, { groupId, topic, sink, maxInFlight: 30 });
    const app = await startMicroservice(transport, recorder, 'solo');

    // 10 orders x 6 events: at most 10 run at once, the rest wait for their order's turn.
    await producer.send(
      Array.from({ length: 60 }, (_, seq) => orderEvent(topic, `order-${seq % 10}`, seq)),
    );
    await waitFor('handlers in flight', () => recorder.active >= 8, 10_000);

    const closing = Date.now();
    await Promise.all([app.close(), transport.drain(), transport.close()]);
    const closeTook = Date.now() - closing;

    // Everything that started also finished, nothing started after the close began.
    expect(recorder.calls.every((call) => call.ok === true)).toBe(true);
    expect(recorder.calls.every((call) => call.startedAt <= closing)).toBe(true);
    expect(recorder.calls.length).toBeLessThan(60);
    expect(closeTook).toBeLessThan(5_000);
    expect(transport.currentStatus).toBe('closed');

    // Per partition the committed offset is the first offset that did not finish.
    const finished = new Map<number, Set<number>>();
    for (const call of recorder.succeeded()) {
      const set = finished.get(call.partition) ?? new Set<number>();
      set.add(Number(call.offset));
      finished.set(call.partition, set);
    }
    const ends = await endOffsets(admin, topic);
    const committed = await committedOffsets(admin, groupId, topic);
    for (const [partition, end] of ends) {
      const done = finished.get(partition) ?? new Set<number>();
      let expected = 0;
      while (expected < end && done.has(expected)) expected++;
      if (expected === 0) expect(committed.get(partition) ?? -1).toBeLessThanOrEqual(0);
      else expect(committed.get(partition)).toBe(expected);
    }
  });

  it('hands partitions over when a second member joins mid-stream: every event handled, per-key order kept in each member', async () => {
    const topic = 'orders.rebalance';
    const groupId = 'rebalance';
    const total = 1200;
    const keys = 30;
    const recorder = new Recorder();
    recorder.behaviour = () => sleep(2 + Math.floor(Math.random() * 6));
    const sink = new MemorySink();
    const first = mockClusterTransport(cluster, { groupId, topic, sink, maxInFlight: 50 });
    const second = mockClusterTransport(cluster, { groupId, topic, sink, maxInFlight: 50 });
    const assignments: Record<string, number[][]> = { a: [], b: [] };
    first.on('assignment', (tps) => assignments['a']?.push(tps.map((tp) => tp.partition)));
    second.on('assignment', (tps) => assignments['b']?.push(tps.map((tp) => tp.partition)));
    apps.push(await startMicroservice(first, recorder, 'a'));

    // A steady stream over ~8 s; the second member joins while the first is busy.
    const streaming = (async () => {
      for (let seq = 0; seq < total; seq += 30) {
        await producer.send(
          Array.from({ length: 30 }, (_, i) =>
            orderEvent(topic, `order-${(seq + i) % keys}`, seq + i),
          ),
        );
        await sleep(200);
      }
    })();
    await waitFor('the first member to be busy', () => recorder.calls.length >= 100, 10_000);
    const joining = startMicroservice(second, recorder, 'b');
    apps.push(await joining);
    await streaming;

    const handled = (): Set<number> => new Set(recorder.succeeded().map((c) => c.seq));
    await waitFor(`all ${total} events handled`, () => handled().size >= total, 30_000);

    // A real hand-over: the first member's assignment shrank, the second one got the rest.
    expect(assignments['a']?.[0]).toHaveLength(6);
    expect(assignments['a']?.at(-1)?.length).toBeLessThan(6);
    expect(assignments['b']?.at(-1)?.length).toBeGreaterThan(0);
    const members = new Set(recorder.succeeded().map((c) => c.member));
    expect([...members].sort()).toEqual(['a', 'b']);
    expect(sink.letters).toHaveLength(0);

    // Within each member: per key, events were started in published order, never overlapping.
    expect(recorder.keyOverlaps).toBe(0);
    const byMemberAndKey = new Map<string, HandledCall[]>();
    for (const call of recorder.calls) {
      const id = `${call.member}/${call.key}`;
      byMemberAndKey.set(id, [...(byMemberAndKey.get(id) ?? []), call]);
    }
    for (const calls of byMemberAndKey.values()) {
      const seqs = calls.map((c) => c.seq);
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    }
    // At least once: duplicates only from the hand-over (another member redelivering).
    const duplicates = recorder.succeeded().length - handled().size;
    expect(duplicates).toBeGreaterThanOrEqual(0);

    await waitForCommittedToReachEnd(admin, groupId, topic, 15_000);
  });
});
