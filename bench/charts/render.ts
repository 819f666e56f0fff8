/**
 * `npm run bench:charts`: redraws every benchmark picture from the JSON in bench/results/
 * (pipeline.svg, webhooks.svg, settlements.svg), without running a bench again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  settlementsResultSchema,
  webhooksResultSchema,
  writeSettlementsChart,
  writeWebhooksChart,
} from './bench-charts.js';

const results = fileURLToPath(new URL('../../../bench/results/', import.meta.url));

function readJson(name: string): unknown {
  const path = `${results}${name}`;
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as unknown) : undefined;
}

async function main(): Promise<void> {
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
