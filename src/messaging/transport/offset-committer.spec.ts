import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { silentLogger } from '../../logging/logger.js';
import type { TopicPartition, TopicPartitionOffset } from './consumer.port.js';
import { OffsetCommitter, tpKey } from './offset-committer.js';
import { InMemoryInboundEventsMetrics } from './transport.metrics.js';

const INTERVAL_MS = 200;
const TP: TopicPartition = { topic: 'erp.orders.v1', partition: 0 };
const KEY = tpKey(TP.topic, TP.partition);

function setup(failFirst = 0) {
  const commits: TopicPartitionOffset[][] = [];
  let failures = failFirst;
  const metrics = new InMemoryInboundEventsMetrics();
  const committer = new OffsetCommitter({
    consumer: {
      commit: (offsets: readonly TopicPartitionOffset[]) => {
        if (failures > 0) {
          failures--;
          return Promise.reject(new Error('rebalance in progress'));
        }
        commits.push([...offsets]);
        return Promise.resolve();
      },
    },
    commitIntervalMs: INTERVAL_MS,
    commitEveryCompletions: 1_000,
    logger: silentLogger(),
    metrics,
    assigned: () => new Map([[KEY, TP]]),
    draining: () => false,
  });
  committer.start();
  return { committer, commits };
}

/** Lets the timer's commit (a promise chain) settle. */
async function advance(ms: number): Promise<void> {
  await jest.advanceTimersByTimeAsync(ms);
}

describe('OffsetCommitter', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('arms no timer while nothing changes', () => {
    const { committer } = setup();
    committer.trackerFor(KEY);
    committer.sawHighWatermark(KEY, 10n);
    jest.advanceTimersByTime(INTERVAL_MS);
    // The same partition end again is no change: nothing is armed.
    committer.sawHighWatermark(KEY, 10n);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('commits a completion one interval later, and then rests', async () => {
    const { committer, commits } = setup();
    const tracker = committer.trackerFor(KEY);
    tracker.add(5n);
    committer.completed(tracker, 5n);
    await advance(INTERVAL_MS - 1);
    expect(commits).toEqual([]);
    await advance(1);
    expect(commits).toEqual([[{ ...TP, offset: '6' }]]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('retries a failed commit with the next round', async () => {
    const { committer, commits } = setup(1);
    const tracker = committer.trackerFor(KEY);
    tracker.add(7n);
    committer.completed(tracker, 7n);
    await advance(INTERVAL_MS);
    expect(commits).toEqual([]);
    await advance(INTERVAL_MS);
    expect(commits).toEqual([[{ ...TP, offset: '8' }]]);
  });

  it('commits again what is done after the client starts over', async () => {
    const { committer, commits } = setup();
    const tracker = committer.trackerFor(KEY);
    tracker.add(1n);
    committer.completed(tracker, 1n);
    await advance(INTERVAL_MS);
    committer.startOver();
    await advance(INTERVAL_MS);
    expect(commits).toEqual([[{ ...TP, offset: '2' }], [{ ...TP, offset: '2' }]]);
  });

  it('arms nothing after the final commit', async () => {
    const { committer, commits } = setup();
    const tracker = committer.trackerFor(KEY);
    tracker.add(3n);
    committer.completed(tracker, 3n);
    const final = committer.commitFinal(1_000);
    await advance(0);
    expect(await final).toEqual([{ ...TP, offset: '4' }]);
    tracker.add(4n);
    committer.completed(tracker, 4n);
    expect(jest.getTimerCount()).toBe(0);
    expect(commits).toEqual([[{ ...TP, offset: '4' }]]);
  });
});
