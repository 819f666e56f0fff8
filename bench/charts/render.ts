/**
 * `npm run bench:charts`: redraws every benchmark picture from the JSON in bench/results/
 * (pipeline.svg, webhooks.svg, settlements.svg), without running a bench again. The
 * pipeline's JSON is the bench's own output, read back as it wrote it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  settlementsResultSchema,
  webhooksResultSchema,
  writeSettlementsChart,
  writeWebhooksChart,
} from './bench-charts.js';
import { writePipelineChart, type ScenarioSummary } from '../pipeline/report.js';

const results = fileURLToPath(new URL('../../../bench/results/', import.meta.url));

function readJson(name: string): unknown {
  const path = `${results}${name}`;
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as unknown) : undefined;
}

/** pipeline.json's scenarios, when it was written with their medians (BENCH_RUNS, issue 21). */
function pipelineSummaries(
  json: unknown,
): { summaries: ScenarioSummary[]; runs: number } | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const { scenarios, settings } = json as { scenarios?: unknown; settings?: { runs?: unknown } };
  if (
    !Array.isArray(scenarios) ||
    !scenarios.every((s) => typeof s === 'object' && s !== null && 'summary' in s)
  ) {
    return undefined;
  }
  const runs = typeof settings?.runs === 'number' ? settings.runs : 1;
  return { summaries: scenarios as ScenarioSummary[], runs };
}

async function main(): Promise<void> {
  const pipeline = pipelineSummaries(readJson('pipeline.json'));
  if (pipeline !== undefined) {
    await writePipelineChart(`${results}pipeline.svg`, pipeline.summaries, pipeline.runs);
    process.stdout.write(`wrote ${results}pipeline.svg\n`);
  } else {
    process.stdout.write(
      'pipeline.json has no medians yet (an older bench wrote it): run npm run bench\n',
    );
  }
  const webhooks = readJson('webhooks.json');
  if (webhooks !== undefined) {
    await writeWebhooksChart(`${results}webhooks.svg`, webhooksResultSchema.parse(webhooks));
    process.stdout.write(`wrote ${results}webhooks.svg\n`);
  }
  const settlements = readJson('settlements.json');
  if (settlements !== undefined) {
    await writeSettlementsChart(
      `${results}settlements.svg`,
      settlementsResultSchema.parse(settlements),
    );
    process.stdout.write(`wrote ${results}settlements.svg\n`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
