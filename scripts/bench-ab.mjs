#!/usr/bin/env node
/**
 * `npm run bench:ab -- <other build's dist/src/main.js>`: the pipeline bench, the same bench
 * binary for both workers, alternating A (the other build) and B (this checkout's build)
 * AB_ROUNDS times (3), so that a drift of the machine hits both alike. A full bench run
 * varies by ±20 % from one run to the next; alternating runs of one scenario are the fair
 * comparison of two builds (AB_B_MAIN names another build as B). BENCH_* variables pass
 * through (e.g. BENCH_KAFKA=mock, BENCH_SCENARIOS=key-100ms, BENCH_PACED_RATE=500,
 * BENCH_SKIP_BARE=1).
 *
 * Prints the medians of A and B and B's difference, and writes every run and the medians to
 * bench/results/ab.json. bench/results/pipeline.* are left as they were.
 *
 * A build of an older commit: `git worktree add /tmp/base <rev>`, symlink node_modules into
 * it, `tsc -p tsconfig.build.json` there, then pass /tmp/base/dist/src/main.js.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const results = `${root}bench/results/`;
const otherMain = process.argv[2];
if (otherMain === undefined || !existsSync(otherMain)) {
  process.stderr.write('usage: npm run bench:ab -- <other build>/dist/src/main.js\n');
  process.exit(2);
}
const rounds = Number(process.env.AB_ROUNDS ?? 3);
if (!Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write('AB_ROUNDS must be a positive integer\n');
  process.exit(2);
}
// AB_B_MAIN: another build as B (two older builds compared), else this checkout's.
const builds = { A: otherMain, B: process.env.AB_B_MAIN || `${root}dist/src/main.js` };

const kept = ['pipeline.json', 'pipeline.md', 'pipeline.svg'].map((name) => {
  const path = `${results}${name}`;
  return { path, text: existsSync(path) ? readFileSync(path, 'utf8') : undefined };
});

/** The figures of one scenario of one run. */
function figures(scenario) {
  return {
    ordersPerSecond: scenario.ordersPerSecond,
    workerMsPerOrder: scenario.cpu?.workerMsPerOrder ?? null,
    pacedRate: scenario.paced?.rate ?? null,
    pacedP50Ms: scenario.paced?.latencyMs?.p50 ?? null,
    pacedP99Ms: scenario.paced?.latencyMs?.p99 ?? null,
    valid: scenario.valid,
  };
}

const runs = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const [build, main] of Object.entries(builds)) {
      process.stdout.write(`round ${round}/${rounds}, build ${build} (${main})\n`);
      const run = spawnSync(process.execPath, [`${root}dist/bench/pipeline.bench.js`], {
        cwd: root,
        // One run per bench: the rounds alternate builds (BENCH_RUNS overrides).
        env: { ...process.env, BENCH_RUNS: process.env.BENCH_RUNS ?? '1', BENCH_WORKER_MAIN: main },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      if (run.status !== 0)
        throw new Error(`the bench failed (build ${build}, exit ${run.status})`);
      const report = JSON.parse(readFileSync(`${results}pipeline.json`, 'utf8'));
      for (const scenario of report.scenarios) {
        runs.push({
          round,
          build,
          scenario: `${scenario.kafka}-${scenario.name}`,
          ...figures(scenario),
        });
      }
    }
  }
} finally {
  for (const file of kept) if (file.text !== undefined) writeFileSync(file.path, file.text);
}

const median = (values) => {
  const sorted = values.filter((v) => typeof v === 'number').sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const keys = ['ordersPerSecond', 'workerMsPerOrder', 'pacedP50Ms', 'pacedP99Ms'];
const summary = [...new Set(runs.map((r) => r.scenario))].map((scenario) => {
  const of = (build) => runs.filter((r) => r.scenario === scenario && r.build === build);
  const row = { scenario, A: {}, B: {}, changePct: {} };
  for (const key of keys) {
    const a = median(of('A').map((r) => r[key]));
    const b = median(of('B').map((r) => r[key]));
    row.A[key] = a;
    row.B[key] = b;
    row.changePct[key] = a && b !== null ? Math.round(((b - a) / a) * 1000) / 10 : null;
  }
  return row;
});

const lines = ['', `medians of ${rounds} alternating runs (A = ${builds.A}, B = ${builds.B})`];
for (const row of summary) {
  lines.push(row.scenario);
  for (const key of keys) {
    lines.push(
      `  ${key.padEnd(18)} A ${String(row.A[key]).padStart(8)}  B ${String(row.B[key]).padStart(8)}  ${row.changePct[key] ?? '-'} %`,
    );
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
writeFileSync(
  `${results}ab.json`,
  `${JSON.stringify({ at: new Date().toISOString(), A: builds.A, B: builds.B, rounds, summary, runs }, null, 2)}\n`,
);
process.stdout.write(`wrote ${results}ab.json\n`);
