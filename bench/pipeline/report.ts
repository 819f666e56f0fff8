/**
 * What the pipeline bench reports: every scenario's runs, the median of the runs that count
 * (valid and not disturbed) with their range, the bridge against the reference pipeline in
 * the same run as ratios (issue 21 §2), the targets, pipeline.md's tables and pipeline.svg.
 *
 * A run is disturbed, and left out of the medians, when the machine was not quiet before it
 * (>= 20 % busy after waiting up to 45 s) or when programs outside the run took more than
 * 15 % of a core during its throughput or its paced window (the /proc time of the machine
 * minus the worker, sandbox, Postgres, the bench and the Kafka JVMs). When every run of a
 * scenario was disturbed, the disturbed ones count, and the table says so.
 */
import type { CreatePaymentRate } from '../sandbox.bench.js';
import { writeChart, type ChartBar } from '../charts/svg-chart.js';
import type { DatabaseCounts } from './database.js';
import type { MemorySample } from './metrics.js';
import type { CpuUse } from './proc.js';

/** Where a scenario's events flow: librdkafka's mock, or a real 3-node KRaft cluster. */
export type KafkaKind = 'mock' | 'kraft-3';
/** What consumed: the worker (dist/src/main.js) or bench/reference/reference-pipeline.ts. */
export type Program = 'bridge' | 'reference';

/** Paced rate of the real-Kafka latency target. */
export const TARGET_PACED_RATE = 500;
/** Busy share of the machine (all cores) above which it is not quiet before a scenario. */
export const QUIET_BUSY_PCT = 20;
/** CPU of other programs (percent of one core) above which a run is disturbed. */
export const DISTURBED_OTHER_PCT = 15;

export interface Latency {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

export interface ScenarioResult {
  readonly name: string;
  readonly program: Program;
  readonly kafka: KafkaKind;
  readonly sequencing: 'key' | 'partition';
  readonly sandboxLatencyMs: number;
  readonly note?: string;
  /** 1-based: which of the bench's runs (BENCH_RUNS) this was. */
  readonly run: number;
  /** Why this run is left out of the medians, or null. */
  readonly disturbed: string | null;
  readonly events: number;
  readonly completed: number;
  readonly finishedInBound: boolean;
  readonly durationMs: number;
  readonly ordersPerSecond: number;
  /** From max(produce time, start of consumption) to payment.created, in the backlog. */
  readonly backlogLatencyMs: Latency;
  /** Paced phase: produce → payment.created at `rate` events/s. */
  readonly paced: {
    readonly rate: number;
    readonly events: number;
    readonly completed: number;
    readonly latencyMs: Latency;
    /** Where the paced events' latency went (the bridge only: its database milestones). */
    readonly stagesMs: Record<string, Latency>;
    /** CPU over the paced window (for the disturbance check). */
    readonly cpu: CpuUse;
  } | null;
  readonly workerMaxRssMb: number;
  /** Postgres transactions committed per order, from the throughput window to 1 s after it. */
  readonly postgresCommitsPerOrder: number;
  /** Node flags the worker ran with (none: Node's defaults). */
  readonly workerNodeArgs: readonly string[];
  /** Node's view at the /metrics sample with the highest RSS (heap vs buffers). */
  readonly workerMemoryAtPeak: MemorySample | null;
  /** From the worker's /metrics at the end of the throughput phase. */
  readonly workerCounters: {
    readonly payflowCallMeanMs: number;
    readonly fetchWaitsForRoom: number;
    readonly outboxPublished: number;
    readonly meanDbBatchUnits: number;
    readonly dbBatches: number;
  } | null;
  /** Busy share of the machine (all cores) just before the scenario started. */
  readonly machineBusyBeforePct: number;
  readonly cpu: CpuUse;
  readonly workerStartMs: number;
  readonly workerExitCode: number | null;
  readonly workerWarnings: number;
  readonly workerWarningSamples: string[];
  readonly duplicates: number;
  readonly deadLetters: number;
  readonly otherStatusEvents: Record<string, number>;
  readonly database: DatabaseCounts;
  readonly valid: boolean;
  readonly problems: string[];
}

/** Why a run is disturbed (see the header), or null. */
export function disturbance(
  run: Pick<ScenarioResult, 'machineBusyBeforePct' | 'cpu'> & {
    readonly pacedCpu: CpuUse | null;
  },
): string | null {
  const reasons: string[] = [];
  if (run.machineBusyBeforePct >= QUIET_BUSY_PCT) {
    reasons.push(`the machine was ${run.machineBusyBeforePct} % busy before it`);
  }
  if (run.cpu.otherPct > DISTURBED_OTHER_PCT) {
    reasons.push(`other programs took ${run.cpu.otherPct} % CPU in the throughput window`);
  }
  if (run.pacedCpu !== null && run.pacedCpu.otherPct > DISTURBED_OTHER_PCT) {
    reasons.push(`other programs took ${run.pacedCpu.otherPct} % CPU in the paced window`);
  }
  return reasons.length === 0 ? null : reasons.join('; ');
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

function spread(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return {
    median: round(median, 3),
    min: sorted[0] as number,
    max: sorted[sorted.length - 1] as number,
  };
}

/** A scenario over its runs: the run with the median orders/s, and the medians that count. */
export interface ScenarioSummary extends ScenarioResult {
  readonly summary: {
    readonly runs: number;
    /** Runs in the medians (valid and undisturbed; all valid ones when every one was disturbed). */
    readonly used: number[];
    readonly leftOut: { readonly run: number; readonly reason: string }[];
    /** Every run counted was disturbed. */
    readonly disturbedOnly: boolean;
    readonly ordersPerSecond: Spread | null;
    readonly pacedP99Ms: Spread | null;
    readonly workerMsPerOrder: Spread | null;
    readonly workerMaxRssMb: Spread | null;
  };
}

export const scenarioKey = (result: Pick<ScenarioResult, 'kafka' | 'name'>): string =>
  `${result.kafka} ${result.name}`;

export function summarize(runs: readonly ScenarioResult[]): ScenarioSummary[] {
  const keys = [...new Set(runs.map(scenarioKey))];
  return keys.map((key) => {
    const all = runs.filter((run) => scenarioKey(run) === key);
    const valid = all.filter((run) => run.valid);
    const quiet = valid.filter((run) => run.disturbed === null);
    const disturbedOnly = quiet.length === 0 && valid.length > 0;
    const used = quiet.length > 0 ? quiet : valid.length > 0 ? valid : all;
    const leftOut = all
      .filter((run) => !used.includes(run))
      .map((run) => ({
        run: run.run,
        reason: run.valid ? `disturbed: ${run.disturbed ?? ''}` : run.problems.join('; '),
      }));
    const byRate = [...used].sort((a, b) => a.ordersPerSecond - b.ordersPerSecond);
    const representative = byRate[Math.floor((byRate.length - 1) / 2)] as ScenarioResult;
    const paced = used.flatMap((run) => (run.paced === null ? [] : [run.paced.latencyMs.p99]));
    return {
      ...representative,
      summary: {
        runs: all.length,
        used: used.map((run) => run.run),
        leftOut,
        disturbedOnly,
        ordersPerSecond: spread(used.map((run) => run.ordersPerSecond)),
        pacedP99Ms: spread(paced),
        workerMsPerOrder: spread(used.map((run) => run.cpu.workerMsPerOrder)),
        workerMaxRssMb: spread(used.map((run) => run.workerMaxRssMb)),
      },
    };
  });
}

const round = (value: number, decimals = 0): number => {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
};

function formatSpread(value: Spread | null, decimals = 0): string {
  if (value === null) return '–';
  const median = round(value.median, decimals);
  if (value.min === value.max) return String(median);
  return `${median} [${round(value.min, decimals)}–${round(value.max, decimals)}]`;
}

function formatLatency(latency: Latency | undefined): string {
  return latency === undefined ? '–' : `${latency.p50} / ${latency.p95} / ${latency.p99}`;
}

/** One figure of the bridge against the reference, as a ratio of medians. */
export interface Comparison {
  readonly kafka: KafkaKind;
  readonly figure: string;
  readonly bridge: Spread | null;
  readonly reference: Spread | null;
  /** bridge median / reference median. */
  readonly ratio: number | null;
  readonly required: string;
  /** Null: no target on this Kafka (the targets are set on real Kafka). */
  readonly met: boolean | null;
  /** Either side counted disturbed runs only: the ratio says little. */
  readonly disturbed: boolean;
}

const BRIDGE = 'key-100ms';
const REFERENCE = 'reference-100ms';

/** key-100ms against reference-100ms on each Kafka (issue 21 §2: the targets on real Kafka). */
export function comparisons(summaries: readonly ScenarioSummary[]): Comparison[] {
  const list: Comparison[] = [];
  for (const kafka of ['kraft-3', 'mock'] as const) {
    const find = (name: string) =>
      summaries.find((summary) => summary.kafka === kafka && summary.name === name);
    const bridge = find(BRIDGE);
    const reference = find(REFERENCE);
    if (bridge === undefined || reference === undefined) continue;
    const real = kafka === 'kraft-3';
    const sameRate = bridge.paced !== null && bridge.paced.rate === reference.paced?.rate;
    const pacedAtTarget = sameRate && bridge.paced?.rate === TARGET_PACED_RATE;
    const row = (
      figure: string,
      of: (summary: ScenarioSummary) => Spread | null,
      bound: { readonly at: number; readonly most: boolean } | null,
    ): Comparison => {
      const b = of(bridge);
      const r = of(reference);
      const ratio =
        b === null || r === null || r.median === 0 ? null : round(b.median / r.median, 2);
      const required =
        bound === null ? '–' : `${bound.most ? '≤' : '≥'} ${bound.at}× the reference`;
      const met =
        !real || bound === null || ratio === null
          ? null
          : bound.most
            ? ratio <= bound.at
            : ratio >= bound.at;
      const disturbed = bridge.summary.disturbedOnly || reference.summary.disturbedOnly;
      return { kafka, figure, bridge: b, reference: r, ratio, required, met, disturbed };
    };
    list.push(
      row('orders/s', (s) => s.summary.ordersPerSecond, { at: 0.8, most: false }),
      row(
        `paced p99 ms${sameRate ? ` at ${bridge.paced?.rate ?? '?'}/s` : ' (not at one rate)'}`,
        (s) => s.summary.pacedP99Ms,
        pacedAtTarget ? { at: 1.25, most: true } : null,
      ),
      row('CPU per order, ms', (s) => s.summary.workerMsPerOrder, { at: 1.5, most: true }),
      row('max RSS, MB', (s) => s.summary.workerMaxRssMb, null),
    );
  }
  return list;
}

export interface Target {
  readonly name: string;
  readonly required: string;
  readonly reached: string;
  readonly met: boolean | null;
}

export function targets(
  summaries: readonly ScenarioSummary[],
  bare: CreatePaymentRate | null,
): Target[] {
  const list: Target[] = comparisons(summaries)
    .filter((row) => row.kafka === 'kraft-3' && row.required !== '–')
    .map((row) => ({
      name: `real Kafka, 100 ms: ${row.figure}, ${BRIDGE} / ${REFERENCE} (medians)`,
      required: row.required,
      reached:
        row.ratio === null
          ? 'not run'
          : `${row.ratio}× (${row.bridge?.median ?? '–'} / ${row.reference?.median ?? '–'})` +
            (row.disturbed ? ', disturbed runs only' : ''),
      met: row.met,
    }));
  // Key sequencing against the partition baseline (earlier issues' target), on each Kafka.
  for (const kafka of ['kraft-3', 'mock'] as const) {
    const find = (name: string) =>
      summaries.find((summary) => summary.kafka === kafka && summary.name === name);
    const key100 = find('key-100ms');
    const part100 = find('partition-100ms');
    if (key100 === undefined || part100 === undefined) continue;
    const speedup =
      part100.ordersPerSecond === 0 ? 0 : key100.ordersPerSecond / part100.ordersPerSecond;
    list.push({
      name: `${kafka === 'mock' ? 'mock' : 'real Kafka'}, 100 ms: key-100ms / partition-100ms`,
      required: '>= 15x',
      reached: `${round(speedup, 1)}x (${key100.ordersPerSecond} / ${part100.ordersPerSecond})`,
      met: speedup >= 15,
    });
  }
  const mock = new Map(
    summaries
      .filter((summary) => summary.kafka === 'mock' && summary.program === 'bridge')
      .map((summary) => [summary.name, summary]),
  );
  const key0 = mock.get('key-0ms');
  const share =
    key0 === undefined || bare === null ? undefined : key0.ordersPerSecond / bare.requestsPerSecond;
  list.push({
    name: 'mock, 0 ms: orders/s vs bare API',
    required: '>= 0.7x',
    reached:
      share === undefined || bare === null || key0 === undefined
        ? 'not run'
        : `${round(share, 2)}x (${key0.ordersPerSecond} / ${bare.requestsPerSecond})`,
    met: share === undefined ? null : share >= 0.7,
  });
  const bridgeRuns = summaries.filter((summary) => summary.program === 'bridge');
  const rssTarget = (name: string, of: readonly ScenarioSummary[]): Target => {
    const maxRss = Math.max(0, ...of.map((summary) => summary.summary.workerMaxRssMb?.max ?? 0));
    return {
      name,
      required: '<= 300 MB',
      reached: of.length === 0 ? 'not run' : `${maxRss} MB (the most of any run counted)`,
      met: of.length === 0 ? null : maxRss <= 300,
    };
  };
  list.push(
    rssTarget(
      'worker RSS, Node defaults (no --max-old-space-size)',
      bridgeRuns.filter((summary) => summary.workerNodeArgs.length === 0),
    ),
    rssTarget(
      'worker RSS, --max-old-space-size=192',
      bridgeRuns.filter((summary) => summary.workerNodeArgs.includes('--max-old-space-size=192')),
    ),
  );
  return list;
}

export function markdown(
  summaries: readonly ScenarioSummary[],
  bare: CreatePaymentRate | null,
  settings: Record<string, unknown>,
  runs: number,
): string {
  const lines: string[] = ['# Pipeline benchmark', ''];
  lines.push(
    `${new Date().toISOString()} · node ${process.version} · ${JSON.stringify(settings)}`,
    '',
    `Each figure is the median of ${runs} run(s) [min–max], the runs alternating scenario by scenario; ` +
      `a run that is invalid or disturbed (the machine busy before it, or other programs above ` +
      `${DISTURBED_OTHER_PCT} % of a core during it) is left out. Picture: [pipeline.svg](pipeline.svg).`,
    '',
    '## The bridge against the reference pipeline',
    '',
    `\`${BRIDGE}\` (the worker) and \`${REFERENCE}\` (bench/reference/reference-pipeline.ts: the ` +
      'irreducible at-least-once work, no Nest) on the same load, Kafka, sandbox (100 ms) and Postgres.',
    '',
    '| kafka | figure | bridge | reference | ratio | required | met |',
    '| --- | --- | ---: | ---: | ---: | --- | --- |',
  );
  for (const row of comparisons(summaries)) {
    const decimals = row.figure.startsWith('CPU') ? 3 : row.figure.startsWith('max RSS') ? 1 : 0;
    lines.push(
      `| ${row.kafka} | ${row.figure} | ${formatSpread(row.bridge, decimals)} | ` +
        `${formatSpread(row.reference, decimals)} | ${row.ratio === null ? '–' : `${row.ratio}×`} | ` +
        `${row.required} | ${row.met === null ? '–' : row.met ? 'yes' : 'no'}` +
        `${row.disturbed ? ' (disturbed runs only)' : ''} |`,
    );
  }
  lines.push(
    '',
    '## Every scenario',
    '',
    'Medians [range] of the runs counted; latencies, CPU shares and validity of the median run (by orders/s).',
    '',
    '| kafka | scenario | runs counted | orders/s | paced p99 ms | worker CPU ms/order | worker max RSS MB | paced p50 / p95 / p99 ms (rate) | backlog p50 / p95 / p99 ms | worker CPU % | postgres CPU % | sandbox CPU % | bench CPU % | Kafka JVMs CPU % | other CPU % | valid |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  );
  for (const s of summaries) {
    const counted = `${s.summary.used.length} of ${s.summary.runs}${s.summary.disturbedOnly ? ' (all disturbed)' : ''}`;
    lines.push(
      `| ${s.kafka} | ${s.name}${s.note === undefined ? '' : ' *'} | ${counted} | ` +
        `${formatSpread(s.summary.ordersPerSecond)} | ${formatSpread(s.summary.pacedP99Ms, 1)} | ` +
        `${formatSpread(s.summary.workerMsPerOrder, 3)} | ${formatSpread(s.summary.workerMaxRssMb, 1)} | ` +
        `${s.paced === null ? '–' : `${formatLatency(s.paced.latencyMs)} (${s.paced.rate}/s)`} | ` +
        `${formatLatency(s.backlogLatencyMs)} | ${s.cpu.workerPct} | ${s.cpu.postgresPct} | ` +
        `${s.cpu.sandboxPct} | ${s.cpu.benchPct} | ${s.cpu.brokersPct} | ${s.cpu.otherPct} | ` +
        `${s.valid ? 'yes' : `NO: ${s.problems.join('; ')}`} |`,
    );
  }
  if (bare !== null) {
    lines.push(
      '',
      `Bare API (POST /api/payments on a sandbox child, concurrency ${bare.concurrency}): ` +
        `${bare.requestsPerSecond} requests/s, p50 ${bare.p50Ms} ms, p99 ${bare.p99Ms} ms` +
        `${bare.errors === 0 ? '' : `, ${bare.errors} errors`}.`,
    );
  }
  const leftOut = summaries.flatMap((s) =>
    s.summary.leftOut.map((entry) => `- ${scenarioKey(s)}, run ${entry.run}: ${entry.reason}`),
  );
  if (leftOut.length > 0) lines.push('', 'Runs left out:', '', ...leftOut);
  const noted = new Map(summaries.flatMap((s) => (s.note === undefined ? [] : [[s.name, s.note]])));
  if (noted.size > 0) {
    lines.push('');
    for (const [name, note] of noted) lines.push(`\\* ${name}: ${note}`);
  }
  lines.push(
    '',
    '## Targets',
    '',
    '| target | required | reached | met |',
    '| --- | --- | --- | --- |',
  );
  for (const target of targets(summaries, bare)) {
    lines.push(
      `| ${target.name} | ${target.required} | ${target.reached} | ${target.met === null ? '–' : target.met ? 'yes' : 'no'} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** pipeline.svg: orders/s, paced p99, CPU per order and RSS of every scenario. */
export async function writePipelineChart(
  path: string,
  summaries: readonly ScenarioSummary[],
  runs: number,
): Promise<void> {
  const figures: [string, (s: ScenarioSummary) => Spread | null, number?][] = [
    ['orders/s (backlog)', (s) => s.summary.ordersPerSecond],
    ['paced p99, ms', (s) => s.summary.pacedP99Ms],
    ['CPU per order, ms', (s) => s.summary.workerMsPerOrder],
    ['max RSS, MB', (s) => s.summary.workerMaxRssMb, 300],
  ];
  const bars: ChartBar[] = figures.flatMap(([figure, of, target]) =>
    summaries.flatMap((s) => {
      const value = of(s);
      if (value === null) return [];
      return [
        {
          figure,
          scenario: `${s.kafka === 'kraft-3' ? 'real' : 'mock'} ${s.name}`,
          series: s.program,
          value: value.median,
          min: value.min,
          max: value.max,
          ...(target === undefined ? {} : { target }),
        },
      ];
    }),
  );
  await writeChart(path, bars, {
    title: 'Order pipeline: the bridge beside the reference pipeline (npm run bench)',
    subtitle: `median of ${runs} run(s), bar: the range; real = 3-node KRaft, mock = librdkafka's mock; paced p99 at the paced rate of each scenario; dashed: RSS bound`,
    series: [
      { name: 'bridge', color: '#2b6cb0' },
      { name: 'reference', color: '#dd6b20' },
    ],
    columns: 2,
  });
}
