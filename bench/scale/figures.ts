/** The figures of a scale step that come from Postgres, and how a step's limit is named. */
import { cpus } from 'node:os';
import pg from 'pg';
import type { StepResult } from './step.js';

export const CORES = cpus().length;

export interface PgStats {
  readonly commits: number;
  readonly rollbacks: number;
  readonly written: number;
}

export async function pgStats(url: string): Promise<PgStats> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ c: string; r: string; w: string }>(
      `SELECT xact_commit::text AS c, xact_rollback::text AS r,
              (tup_inserted + tup_updated + tup_deleted)::text AS w
         FROM pg_stat_database WHERE datname = current_database()`,
    );
    const row = rows[0];
    return {
      commits: Number(row?.c ?? 0),
      rollbacks: Number(row?.r ?? 0),
      written: Number(row?.w ?? 0),
    };
  } finally {
    await client.end();
  }
}

export async function deadLetters(url: string): Promise<{ reason: string; order_id: string }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ reason: string; order_id: string }>(
      `SELECT reason, coalesce(order_id, '') AS order_id FROM dead_letters`,
    );
    return rows;
  } finally {
    await client.end();
  }
}

export const round = (value: number, decimals = 0): number => {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
};

/** What most likely bounds the step, from where the CPU went. */
export function limitOf(cpu: StepResult['cpuPct'], workers: number, perWorkerMax: number): string {
  const cores = CORES;
  const machine = `machine ${cpu.machineBusy} % of ${cores} cores busy`;
  if (cpu.machineBusy >= 85) {
    const parts = [
      ['workers', cpu.workers],
      ['postgres', cpu.postgres],
      ['brokers', cpu.brokers],
      ['sandbox', cpu.sandbox],
      ['other programs', cpu.other],
    ] as const;
    const top = [...parts].sort((a, b) => b[1] - a[1])[0];
    return `CPU: ${machine}; largest share ${top?.[0] ?? '?'} (${top?.[1] ?? 0} % of a core)`;
  }
  if (perWorkerMax >= 90)
    return `one worker's CPU (a Node thread at ${perWorkerMax} %); ${machine}`;
  return `not CPU (${machine}, ${workers} worker(s)): Payflow latency x in-flight bound, or Postgres waits`;
}
