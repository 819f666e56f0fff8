import { describe, expect, it } from '@jest/globals';
import { BucketBackoff } from './bucket-backoff.js';
import type { OutboxRelayMetrics } from './relay.options.js';
import { capturingLogger } from '../../test/support/capturing-logger.js';

const denied = new Error('Kafka denied WRITE on topic payflow.payment-status.v1');

function backoffWith(metrics: OutboxRelayMetrics = {}) {
  // Info and up: the per-retry debug lines are not what this spec is about.
  const { logger, lines } = capturingLogger('info');
  const backoff = new BucketBackoff({ initialMs: 100, maxMs: 5_000, metrics, logger });
  return { backoff, lines };
}

describe('BucketBackoff', () => {
  it('holds a failed bucket back while the others stay due', () => {
    const { backoff } = backoffWith();
    const now = Date.now();
    backoff.record(3, { kind: 'failed', error: denied });
    expect(backoff.isDue(3, now)).toBe(false);
    expect(backoff.isDue(4, now)).toBe(true);
    expect(backoff.nextRetryAt([3, 4], now)).toBeGreaterThan(now);
    backoff.record(3, { kind: 'published', count: 1 });
    expect(backoff.isDue(3, now)).toBe(true);
  });

  it('counts the rows a partly failed bucket published (its other topics)', () => {
    const published: number[] = [];
    const failed: number[] = [];
    const { backoff } = backoffWith({
      published: (count) => published.push(count),
      publishFailed: (bucket) => failed.push(bucket),
    });
    backoff.record(1, { kind: 'failed', error: denied, published: 7 });
    backoff.record(2, { kind: 'failed', error: denied });
    expect(published).toEqual([7]);
    expect(failed).toEqual([1, 2]);
  });

  it('warns once when buckets start failing and says once when the last publishes again', () => {
    const { backoff, lines } = backoffWith();
    for (let pass = 0; pass < 3; pass++) {
      for (let bucket = 0; bucket < 16; bucket++)
        backoff.record(bucket, { kind: 'failed', error: denied });
    }
    for (let bucket = 0; bucket < 15; bucket++)
      backoff.record(bucket, { kind: 'published', count: 2 });
    expect(lines.map((line) => line.msg)).toEqual([
      'outbox batch not published; the rows stay pending and are retried',
    ]);
    // The last failing bucket goes to another replica: the streak is over here too.
    backoff.forget(15);
    expect(lines.map((line) => line.msg)).toEqual([
      'outbox batch not published; the rows stay pending and are retried',
      'outbox publishes again',
    ]);
    expect(lines[1]).toMatchObject({ failedBatches: 48 });
    backoff.record(0, { kind: 'failed', error: denied });
    expect(lines).toHaveLength(3);
  });
});
