import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { KeyScheduler, type Ticket } from './key-scheduler.js';

interface Item {
  readonly id: number;
  readonly partition: string;
  readonly lane: string | null;
}

function harness() {
  const scheduler = new KeyScheduler<Item>();
  const tickets = new Map<number, Ticket<Item>>();
  const running = new Set<number>();
  const started: number[] = [];
  let next = 0;
  const onStart = (items: Item[]): void => {
    for (const item of items) {
      expect(running.has(item.id)).toBe(false);
      running.add(item.id);
      started.push(item.id);
    }
  };
  return {
    scheduler,
    running,
    started,
    add(partition: string, lane: string | null): Item {
      const item = { id: next++, partition, lane };
      const { ticket, start } = scheduler.enqueue(partition, lane, item);
      tickets.set(item.id, ticket);
      onStart(start);
      return item;
    },
    done(item: Item): void {
      const ticket = tickets.get(item.id);
      if (ticket === undefined) throw new Error('unknown item');
      running.delete(item.id);
      onStart(scheduler.complete(ticket));
    },
  };
}

describe('KeyScheduler', () => {
  it('runs different keys of a partition in parallel and one key in order', () => {
    const h = harness();
    const a1 = h.add('p0', 'A');
    const a2 = h.add('p0', 'A');
    const b1 = h.add('p0', 'B');
    expect([...h.running]).toEqual([a1.id, b1.id]);
    expect(h.scheduler.queued).toBe(1);
    h.done(a1);
    expect(h.running.has(a2.id)).toBe(true);
    h.done(b1);
    h.done(a2);
    expect(h.scheduler.running).toBe(0);
    expect(h.scheduler.queued).toBe(0);
  });

  it('keeps the same key of different partitions independent', () => {
    const h = harness();
    h.add('p0', 'A');
    h.add('p1', 'A');
    expect(h.running.size).toBe(2);
  });

  it('treats a keyless item as a barrier of its partition', () => {
    const h = harness();
    const a = h.add('p0', 'A');
    const b = h.add('p0', 'B');
    const barrier = h.add('p0', null);
    const c = h.add('p0', 'C');
    const other = h.add('p1', 'A');
    expect([...h.running].sort()).toEqual([a.id, b.id, other.id].sort());
    h.done(a);
    expect(h.running.has(barrier.id)).toBe(false);
    h.done(b);
    expect(h.running.has(barrier.id)).toBe(true);
    expect(h.running.has(c.id)).toBe(false);
    h.done(barrier);
    expect(h.running.has(c.id)).toBe(true);
  });

  it('runs consecutive barriers one at a time', () => {
    const h = harness();
    const first = h.add('p0', null);
    const second = h.add('p0', null);
    expect([...h.running]).toEqual([first.id]);
    h.done(first);
    expect([...h.running]).toEqual([second.id]);
  });

  it('drops queued items of a revoked partition and keeps order behind running ones', () => {
    const h = harness();
    const a1 = h.add('p0', 'A');
    h.add('p0', 'A');
    h.add('p0', null);
    h.add('p0', 'B');
    const dropped = h.scheduler.dropQueued('p0');
    expect(dropped).toHaveLength(3);
    expect(h.scheduler.queued).toBe(0);
    expect(h.scheduler.pendingIn('p0')).toBe(1);
    // The partition comes back while a1 still runs: A waits, B may start.
    const a3 = h.add('p0', 'A');
    const b2 = h.add('p0', 'B');
    expect(h.running.has(a3.id)).toBe(false);
    expect(h.running.has(b2.id)).toBe(true);
    h.done(a1);
    expect(h.running.has(a3.id)).toBe(true);
  });

  it('rejects completing an item that is not running', () => {
    const h = harness();
    h.add('p0', 'A');
    const queued = h.add('p0', 'A');
    expect(() => h.done(queued)).toThrow(/not running/);
  });

  it('keeps per-key order, barrier exclusivity and progress under random interleavings', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        partition: fc.constantFrom('p0', 'p1'),
        lane: fc.option(fc.constantFrom('A', 'B', 'C'), { nil: null, freq: 6 }),
      }),
      fc.record({ kind: fc.constant('done' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('drop' as const), partition: fc.constantFrom('p0', 'p1') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const h = harness();
        const items = new Map<number, Item>();
        const alive = new Set<number>(); // enqueued and not finished or dropped
        const order: number[] = []; // enqueue order
        const check = (): void => {
          const runningItems = [...h.running].map((id) => items.get(id) as Item);
          for (const item of runningItems) {
            // Everything earlier in the same lane (or any earlier item, for a barrier, or an
            // earlier barrier, for a keyed item) of the partition has finished.
            for (const earlier of order) {
              if (earlier >= item.id) break;
              if (!alive.has(earlier)) continue;
              const other = items.get(earlier) as Item;
              if (other.partition !== item.partition) continue;
              const conflicts =
                item.lane === null || other.lane === null || other.lane === item.lane;
              if (conflicts) throw new Error(`item ${item.id} runs before ${earlier} finished`);
            }
          }
        };
        for (const o of ops) {
          if (o.kind === 'add') {
            const item = h.add(o.partition, o.lane);
            items.set(item.id, item);
            alive.add(item.id);
            order.push(item.id);
          } else if (o.kind === 'done') {
            const runningIds = [...h.running];
            if (runningIds.length === 0) continue;
            const id = runningIds[o.pick % runningIds.length] as number;
            h.done(items.get(id) as Item);
            alive.delete(id);
          } else {
            for (const dropped of h.scheduler.dropQueued(o.partition)) alive.delete(dropped.id);
          }
          check();
          expect(h.scheduler.running).toBe(h.running.size);
          expect(h.scheduler.queued + h.scheduler.running).toBe(alive.size);
        }
        // Progress: finishing whatever runs eventually runs everything still alive.
        for (let guard = 0; h.running.size > 0 && guard < 1000; guard++) {
          const id = [...h.running][0] as number;
          h.done(items.get(id) as Item);
          alive.delete(id);
          check();
        }
        expect(alive.size).toBe(0);
        expect(h.scheduler.queued).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
