/**
 * The pictures of the webhook and settlement benches (bench/results/webhooks.svg,
 * settlements.svg), drawn from what each bench writes to its JSON. The benches call these
 * after a run; `npm run bench:charts` redraws every picture from the JSON already there.
 */
import { z } from 'zod';
import { writeChart, type ChartBar } from './svg-chart.js';

export const webhooksResultSchema = z.looseObject({
  measuredAt: z.string(),
  setup: z.looseObject({ concurrency: z.number(), requests: z.number() }),
  webhooksPerSecond: z.number(),
  p50Ms: z.number(),
  p90Ms: z.number(),
  p99Ms: z.number(),
  cpuMsPerWebhook: z.looseObject({
    receiver: z.number(),
    postgres: z.number(),
    loadGenerator: z.number(),
  }),
  target: z.looseObject({ webhooksPerSecond: z.number(), p99Ms: z.number() }),
});
export type WebhooksResult = z.infer<typeof webhooksResultSchema>;

export async function writeWebhooksChart(path: string, result: WebhooksResult): Promise<void> {
  const bars: ChartBar[] = [
    {
      figure: 'webhooks acknowledged / s',
      scenario: `concurrency ${result.setup.concurrency}`,
      series: 'receiver',
      value: result.webhooksPerSecond,
      target: result.target.webhooksPerSecond,
    },
    ...(['p50Ms', 'p90Ms', 'p99Ms'] as const).map((key) => ({
      figure: 'ack latency, ms',
      scenario: key.slice(0, 3),
      series: 'receiver',
      value: result[key],
      ...(key === 'p99Ms' ? { target: result.target.p99Ms } : {}),
    })),
    ...(['receiver', 'postgres', 'loadGenerator'] as const).map((party) => ({
      figure: 'CPU per webhook, ms',
      scenario: party === 'loadGenerator' ? 'load generator' : party,
      series: party === 'receiver' ? 'receiver' : 'around it',
      value: result.cpuMsPerWebhook[party],
    })),
  ];
  await writeChart(path, bars, {
    title: 'Webhook receiver: stored before the 2xx (npm run bench:webhooks)',
    subtitle: `${result.setup.requests} HTTPS requests, ${result.measuredAt.slice(0, 10)}; dashed: target`,
    series: [
      { name: 'receiver', color: '#2b6cb0' },
      { name: 'around it', color: '#a0aec0' },
    ],
  });
}

export const settlementsResultSchema = z.looseObject({
  at: z.string(),
  results: z.array(
    z.looseObject({
      heap: z.string(),
      rows: z.number(),
      rowsPerSecond: z.number(),
      rssGrowthMB: z.number(),
      jsGrowthMB: z.number(),
      fileMB: z.number(),
    }),
  ),
});
export type SettlementsResult = z.infer<typeof settlementsResultSchema>;

export async function writeSettlementsChart(
  path: string,
  result: SettlementsResult,
): Promise<void> {
  const figures = [
    ['rows / s', 'rowsPerSecond'],
    ['RSS growth, MB', 'rssGrowthMB'],
    ['JS heap growth, MB', 'jsGrowthMB'],
  ] as const;
  const bars: ChartBar[] = figures.flatMap(([figure, key]) =>
    result.results.map((row) => ({
      figure,
      scenario: `${row.rows.toLocaleString('en')} rows`,
      series: row.heap === 'default' ? 'default heap' : `heap ${row.heap}`,
      value: row[key],
    })),
  );
  await writeChart(path, bars, {
    title: 'Settlement pull: one night of rows (npm run bench:settlements)',
    subtitle: `download, hash, chunks, csv-parse, outbox; ${result.at.slice(0, 10)}`,
  });
}
