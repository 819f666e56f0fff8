import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Registry, collectDefaultMetrics } from 'prom-client';
import {
  EventLoopDelaySampler,
  SAMPLE_AFTER_SCRAPE_MS,
  registerProcessMetrics,
} from './process.metrics.js';

const PREFIX = 'pfb_test_';
const samplers: EventLoopDelaySampler[] = [];

afterEach(() => {
  for (const sampler of samplers.splice(0)) sampler.stop();
  jest.useRealTimers();
});

/** Name, help and type of each metric of a registry, sorted by name. */
async function shapeOf(registry: Registry): Promise<string[]> {
  return (await registry.getMetricsAsJSON())
    .map((metric) => `${metric.name} ${metric.type} ${metric.help}`)
    .sort();
}

describe('registerProcessMetrics', () => {
  it("exposes exactly prom-client's default metrics: names, types and help", async () => {
    const ours = new Registry();
    samplers.push(
      registerProcessMetrics(ours, { prefix: PREFIX, eventLoopMonitoringPrecision: 100 }),
    );
    const theirs = new Registry();
    collectDefaultMetrics({ register: theirs, prefix: PREFIX, eventLoopMonitoringPrecision: 100 });
    const shape = await shapeOf(ours);
    expect(shape).toEqual(await shapeOf(theirs));
    expect(
      shape.some((line) => line.startsWith(`${PREFIX}nodejs_eventloop_lag_p99_seconds `)),
    ).toBe(true);
  });
});

describe('EventLoopDelaySampler', () => {
  it('samples only from a scrape until SAMPLE_AFTER_SCRAPE_MS without one', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'hrtime', 'performance'] });
    const started: IntervalHistogram[] = [];
    const registry = new Registry();
    const sampler = new EventLoopDelaySampler(
      registry,
      { prefix: PREFIX, eventLoopMonitoringPrecision: 20 },
      (resolution) => {
        const histogram = monitorEventLoopDelay({ resolution });
        started.push(histogram);
        return histogram;
      },
    );
    samplers.push(sampler);
    expect(sampler.sampling).toBe(false);

    // The first scrape starts it and has no delay statistics yet.
    const first = await registry.metrics();
    expect(sampler.sampling).toBe(true);
    expect(started).toHaveLength(1);
    expect(first).toContain(`\n${PREFIX}nodejs_eventloop_lag_p99_seconds 0\n`);
    expect(first).toMatch(new RegExp(`\\n${PREFIX}nodejs_eventloop_lag_seconds \\d`));

    // Scrapes within the window keep the same histogram on.
    jest.advanceTimersByTime(SAMPLE_AFTER_SCRAPE_MS - 1_000);
    await registry.metrics();
    jest.advanceTimersByTime(SAMPLE_AFTER_SCRAPE_MS - 1_000);
    expect(sampler.sampling).toBe(true);
    expect(started).toHaveLength(1);

    // No scrape for the whole window: off, until the next scrape.
    jest.advanceTimersByTime(1_000);
    expect(sampler.sampling).toBe(false);
    await registry.metrics();
    expect(sampler.sampling).toBe(true);
    expect(started).toHaveLength(2);
  });

  it('reports the delays recorded between two scrapes', async () => {
    const registry = new Registry();
    const sampler = new EventLoopDelaySampler(registry, {
      prefix: PREFIX,
      eventLoopMonitoringPrecision: 10,
    });
    samplers.push(sampler);
    await registry.metrics();
    // Block the loop for ~60 ms a few times, with turns of the loop in between.
    for (let round = 0; round < 3; round++) {
      const until = Date.now() + 60;
      while (Date.now() < until) {
        // busy
      }
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    const text = await registry.metrics();
    const max = Number(
      new RegExp(`\\n${PREFIX}nodejs_eventloop_lag_max_seconds (\\S+)\\n`).exec(text)?.[1],
    );
    expect(max).toBeGreaterThan(0.03);
    expect(max).toBeLessThan(5);
  });
});
