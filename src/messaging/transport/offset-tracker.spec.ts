import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { PartitionOffsetTracker } from './offset-tracker.js';

describe('PartitionOffsetTracker', () => {
  it('has no watermark before anything was added', () => {
    const tracker = new PartitionOffsetTracker();
    expect(tracker.watermark()).toBeUndefined();
    expect(tracker.commitCandidate()).toBeUndefined();
    expect(tracker.isNew(0n)).toBe(true);
  });

  it('stops at the first unfinished offset and jumps gaps', () => {
    const tracker = new PartitionOffsetTracker();
    for (const offset of [10n, 11n, 15n, 16n]) tracker.add(offset);
    expect(tracker.watermark()).toBe(10n);
    tracker.complete(11n);
    tracker.complete(16n);
    expect(tracker.watermark()).toBe(10n);
    tracker.complete(10n);
    expect(tracker.watermark()).toBe(15n); // 12..14 were never fetched (compaction, markers)
    tracker.complete(15n);
    expect(tracker.watermark()).toBe(17n);
    expect(tracker.pending).toBe(0);
  });

  it('rejects offsets that do not move forward and reports duplicates', () => {
    const tracker = new PartitionOffsetTracker();
    tracker.add(5n);
    expect(tracker.isNew(5n)).toBe(false);
    expect(tracker.isNew(4n)).toBe(false);
    expect(tracker.isNew(6n)).toBe(true);
    expect(() => tracker.add(5n)).toThrow(/not after/);
    expect(tracker.complete(4n)).toBe(false);
    expect(tracker.complete(5n)).toBe(true);
    expect(tracker.complete(5n)).toBe(false);
  });

  it('handles offsets beyond 2^53', () => {
    const tracker = new PartitionOffsetTracker();
    const big = 2n ** 62n;
    tracker.add(big);
    tracker.add(big + 1n);
    tracker.complete(big);
    expect(tracker.watermark()).toBe(big + 1n);
    tracker.complete(big + 1n);
    expect(tracker.watermark()).toBe(big + 2n);
  });

  it('offers a commit only when the watermark moved past the last commit', () => {
    const tracker = new PartitionOffsetTracker();
    tracker.add(0n);
    tracker.add(1n);
    tracker.complete(0n);
    expect(tracker.commitCandidate()).toBe(1n);
    tracker.committed = 1n;
    expect(tracker.commitCandidate()).toBeUndefined();
    tracker.complete(1n);
    expect(tracker.commitCandidate()).toBe(2n);
  });

  it('never passes an unfinished offset, whatever the completion order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 300 }),
        fc.bigInt({ min: 0n, max: 2n ** 60n }),
        fc.infiniteStream(fc.nat()),
        (gaps, start, picks) => {
          const tracker = new PartitionOffsetTracker();
          const offsets: bigint[] = [];
          let offset = start;
          for (const gap of gaps) {
            tracker.add(offset);
            offsets.push(offset);
            offset += BigInt(gap);
          }
          const pending = [...offsets];
          const done = new Set<bigint>();
          let previous = tracker.watermark() ?? 0n;
          const iterator = picks[Symbol.iterator]();
          while (pending.length > 0) {
            const index = (iterator.next().value as number) % pending.length;
            const [picked] = pending.splice(index, 1) as [bigint];
            tracker.complete(picked);
            done.add(picked);
            const watermark = tracker.watermark() as bigint;
            // Monotonic, and everything below it is done.
            expect(watermark >= previous).toBe(true);
            for (const o of offsets) {
              if (o >= watermark) break;
              expect(done.has(o)).toBe(true);
            }
            // Tight: the watermark is an unfinished offset or the end.
            const last = offsets[offsets.length - 1] as bigint;
            expect(
              watermark === last + 1n || (offsets.includes(watermark) && !done.has(watermark)),
            ).toBe(true);
            previous = watermark;
          }
          expect(tracker.watermark()).toBe((offsets[offsets.length - 1] as bigint) + 1n);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('compacts its storage on long runs', () => {
    const tracker = new PartitionOffsetTracker();
    for (let i = 0n; i < 5000n; i++) {
      tracker.add(i);
      tracker.complete(i);
      if (i % 100n === 0n) expect(tracker.watermark()).toBe(i + 1n);
    }
    expect(tracker.watermark()).toBe(5000n);
  });
});
