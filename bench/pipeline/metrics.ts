/**
 * Samples of the worker's Prometheus endpoint (GET /metrics on its management port): memory as Node sees it (to
 * tell the V8 heap from buffers when the RSS is high) and a few pipeline counters.
 */

/** Metric name (with labels as written) → value, for the lines of a text exposition. */
export function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    const value = Number(line.slice(space + 1));
    if (Number.isFinite(value)) values.set(line.slice(0, space), value);
  }
  return values;
}

export async function scrapeMetrics(port: number): Promise<Map<string, number> | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
      signal: AbortSignal.timeout(2_000),
    });
    if (!response.ok) return undefined;
    return parseMetrics(await response.text());
  } catch {
    return undefined;
  }
}

/** Sum of every series of a metric (all label sets). */
export function metricSum(values: ReadonlyMap<string, number>, name: string): number {
  let sum = 0;
  for (const [series, value] of values) {
    if (series === name || series.startsWith(`${name}{`)) sum += value;
  }
  return sum;
}

export interface MemorySample {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  readonly heapTotalMb: number;
  readonly externalMb: number;
}

const mb = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

export function memoryOf(values: ReadonlyMap<string, number>): MemorySample {
  return {
    rssMb: mb(metricSum(values, 'payflow_bridge_process_resident_memory_bytes')),
    heapUsedMb: mb(metricSum(values, 'payflow_bridge_nodejs_heap_size_used_bytes')),
    heapTotalMb: mb(metricSum(values, 'payflow_bridge_nodejs_heap_size_total_bytes')),
    externalMb: mb(metricSum(values, 'payflow_bridge_nodejs_external_memory_bytes')),
  };
}

/**
 * Scrapes every `intervalMs` and keeps the sample taken at the highest RSS. Every 5 s: a
 * scrape costs the worker ~6 ms of CPU that the reference pipeline (which has no /metrics)
 * does not pay, and the RSS peak itself is sampled from /proc (RssSampler), not from here.
 */
export class MetricsSampler {
  peak: MemorySample | undefined;
  last: Map<string, number> | undefined;
  private readonly timer: NodeJS.Timeout;
  private busy = false;

  constructor(
    private readonly port: number,
    intervalMs = 5_000,
  ) {
    this.timer = setInterval(() => void this.sample(), intervalMs);
    this.timer.unref();
  }

  async sample(): Promise<Map<string, number> | undefined> {
    if (this.busy) return this.last;
    this.busy = true;
    try {
      const values = await scrapeMetrics(this.port);
      if (values === undefined) return undefined;
      this.last = values;
      const memory = memoryOf(values);
      if (this.peak === undefined || memory.rssMb > this.peak.rssMb) this.peak = memory;
      return values;
    } finally {
      this.busy = false;
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
