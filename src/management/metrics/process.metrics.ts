/**
 * prom-client's default process metrics (CPU, memory, heap, handles, GC, version, event-loop
 * delay), with one change: the event-loop delay histogram samples only while /metrics is
 * scraped. prom-client's own samples from start-up to exit, every
 * `eventLoopMonitoringPrecision` ms (a timer in native code), whether anybody reads it or
 * not; for an idle worker that nobody scrapes those wake-ups were a cost for nothing
 * (bench:idle). Here the histogram starts at a scrape and stops when no scrape came for
 * SAMPLE_AFTER_SCRAPE_MS, so a worker that Prometheus scrapes (every 15-60 s) always
 * samples, as before, under the same series names and help texts.
 *
 * The other default metrics come from prom-client's own collectors, one by one (all of
 * `collectDefaultMetrics.metricsList` except `eventLoopLag`); process.metrics.spec.ts checks
 * that the series are exactly those of collectDefaultMetrics.
 */
import { createRequire } from 'node:module';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import {
  Gauge,
  collectDefaultMetrics,
  type DefaultMetricsCollectorConfiguration,
  type Registry,
  type RegistryContentType,
} from 'prom-client';

/** One of prom-client's default collectors (prom-client/lib/metrics/<name>.js). */
type DefaultCollector = (
  registry: Registry,
  config: DefaultMetricsCollectorConfiguration<RegistryContentType>,
) => void;

type DelayStat = 'min' | 'max' | 'mean' | 'stddev' | 'p50' | 'p90' | 'p99';

/** The collector replaced here. */
const EVENT_LOOP_LAG = 'eventLoopLag';

/** Sampling goes on this long after the last scrape (longer than any scrape interval). */
export const SAMPLE_AFTER_SCRAPE_MS = 5 * 60_000;

const load = createRequire(import.meta.url);

export interface ProcessMetricsOptions {
  readonly prefix: string;
  /** The histogram's sampling interval while sampling (ms). */
  readonly eventLoopMonitoringPrecision: number;
}

/** Registers the default process metrics in `registry`; returns the event-loop sampler. */
export function registerProcessMetrics(
  registry: Registry,
  options: ProcessMetricsOptions,
): EventLoopDelaySampler {
  const config = { register: registry, prefix: options.prefix };
  for (const name of collectDefaultMetrics.metricsList) {
    if (name === EVENT_LOOP_LAG) continue;
    const collector = load(`prom-client/lib/metrics/${name}`) as DefaultCollector;
    collector(registry, config);
  }
  return new EventLoopDelaySampler(registry, options);
}

/**
 * prom-client's event-loop series (`nodejs_eventloop_lag_seconds` measured by a
 * setImmediate at the scrape, and min, max, mean, stddev, p50, p90, p99 of the delay
 * histogram since the last scrape), with the histogram on only while scraped. The scrape
 * that starts it has no histogram values yet (it reports 0 for them).
 */
export class EventLoopDelaySampler {
  private histogram: IntervalHistogram | undefined;
  private stopTimer: NodeJS.Timeout | undefined;

  constructor(
    registry: Registry,
    private readonly options: ProcessMetricsOptions,
    private readonly monitor: (resolution: number) => IntervalHistogram = (resolution) =>
      monitorEventLoopDelay({ resolution }),
  ) {
    const gauge = (name: string, help: string, collect?: () => Promise<void>): Gauge =>
      new Gauge({
        name: `${options.prefix}${name}`,
        help,
        registers: [registry],
        ...(collect === undefined ? {} : { collect }),
      });
    // Registered first, so that its collect (which sets the others, as prom-client's does)
    // runs before the registry reads them.
    const lag = gauge('nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds.', () =>
      this.collect(lag, stats),
    );
    const stats: Record<DelayStat, Gauge> = {
      min: gauge('nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.'),
      max: gauge('nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.'),
      mean: gauge(
        'nodejs_eventloop_lag_mean_seconds',
        'The mean of the recorded event loop delays.',
      ),
      stddev: gauge(
        'nodejs_eventloop_lag_stddev_seconds',
        'The standard deviation of the recorded event loop delays.',
      ),
      p50: gauge(
        'nodejs_eventloop_lag_p50_seconds',
        'The 50th percentile of the recorded event loop delays.',
      ),
      p90: gauge(
        'nodejs_eventloop_lag_p90_seconds',
        'The 90th percentile of the recorded event loop delays.',
      ),
      p99: gauge(
        'nodejs_eventloop_lag_p99_seconds',
        'The 99th percentile of the recorded event loop delays.',
      ),
    };
  }

  /** Sets the delay statistics since the last scrape (synchronously), then the lag. */
  private async collect(lag: Gauge, stats: Record<DelayStat, Gauge>): Promise<void> {
    const histogram = this.scraped();
    const sampled = histogram !== undefined && histogram.count > 0;
    const seconds = (nanoseconds: number | undefined): number =>
      sampled && nanoseconds !== undefined ? nanoseconds / 1e9 : 0;
    stats.min.set(seconds(histogram?.min));
    stats.max.set(seconds(histogram?.max));
    stats.mean.set(seconds(histogram?.mean));
    stats.stddev.set(seconds(histogram?.stddev));
    stats.p50.set(seconds(histogram?.percentile(50)));
    stats.p90.set(seconds(histogram?.percentile(90)));
    stats.p99.set(seconds(histogram?.percentile(99)));
    histogram?.reset();
    const start = process.hrtime.bigint();
    await new Promise<void>((resolve) => setImmediate(resolve));
    lag.set(Number(process.hrtime.bigint() - start) / 1e9);
  }

  /** Whether the histogram samples now. */
  get sampling(): boolean {
    return this.histogram !== undefined;
  }

  /**
   * A scrape: the histogram as it stands (undefined when it was off), and sampling goes
   * on for SAMPLE_AFTER_SCRAPE_MS more.
   */
  scraped(): IntervalHistogram | undefined {
    const current = this.histogram;
    if (current === undefined) {
      this.histogram = this.monitor(this.options.eventLoopMonitoringPrecision);
      this.histogram.enable();
    }
    if (this.stopTimer !== undefined) clearTimeout(this.stopTimer);
    this.stopTimer = setTimeout(() => this.stop(), SAMPLE_AFTER_SCRAPE_MS);
    this.stopTimer.unref();
    return current;
  }

  /** Stops sampling (no scrape for a while, or shutdown). */
  stop(): void {
    if (this.stopTimer !== undefined) clearTimeout(this.stopTimer);
    this.stopTimer = undefined;
    this.histogram?.disable();
    this.histogram = undefined;
  }
}
