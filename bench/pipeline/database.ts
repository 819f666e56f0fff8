/**
 * A fresh database per scenario (`payflow_bridge_bench_<scenario>`, dropped and created;
 * the worker migrates it at start-up) and the counts that validate a run.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const BENCH_POSTGRES = 'postgres://postgres@127.0.0.1:5432';

const NAME = /^payflow_bridge_bench_[a-z0-9_]+$/;

export function benchDatabaseName(scenario: string): string {
  const name = `payflow_bridge_bench_${scenario.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`;
  if (!NAME.test(name)) throw new Error(`bad bench database name ${name}`);
  return name;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `${BENCH_POSTGRES}/postgres` });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Drops (if present) and creates the database; returns its URL. */
export async function freshDatabase(name: string): Promise<string> {
  if (!NAME.test(name)) throw new Error(`refusing to recreate ${name}`);
  await admin(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  });
  return `${BENCH_POSTGRES}/${name}`;
}

export async function dropDatabase(name: string): Promise<void> {
  if (!NAME.test(name)) throw new Error(`refusing to drop ${name}`);
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

export interface DatabaseCounts {
  readonly paymentsCreated: number;
  readonly paymentsOther: number;
  readonly processedEvents: number;
  readonly deadLetters: number;
  readonly outboxPending: number;
  readonly attemptsNotSucceeded: number;
}

export async function databaseCounts(url: string): Promise<DatabaseCounts> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<Record<keyof DatabaseCounts, number>>(`
      SELECT (SELECT count(*)::int FROM payments WHERE state = 'created') AS "paymentsCreated",
             (SELECT count(*)::int FROM payments WHERE state <> 'created') AS "paymentsOther",
             (SELECT count(*)::int FROM processed_events) AS "processedEvents",
             (SELECT count(*)::int FROM dead_letters) AS "deadLetters",
             (SELECT count(*)::int FROM outbox WHERE published_at IS NULL) AS "outboxPending",
             (SELECT count(*)::int FROM command_attempts WHERE state <> 'succeeded')
               AS "attemptsNotSucceeded"`);
    const row = rows[0];
    if (row === undefined) throw new Error('no counts');
    return row;
  } finally {
    await client.end();
  }
}

/** Wall-clock milestones (epoch ms) of one event in the database. */
export interface EventMilestones {
  /** Transaction start of the batch that recorded the attempt (begin step). */
  readonly begun: number;
  /** When `sent_at` was committed (just before the request left), or null. */
  readonly sent: number | null;
  /** Transaction start of the batch that recorded the outcome (complete step). */
  readonly completing: number;
  /** The outcome's batch wrote its finish statement (just before its COMMIT). */
  readonly finished: number;
  /** Transaction start of the relay batch that published the payment.created. */
  readonly publishing: number;
}

/** Milestones of the given events (for the latency breakdown of the paced phase). */
export async function eventMilestones(
  url: string,
  eventIds: readonly string[],
): Promise<Map<string, EventMilestones>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{
      event_id: string;
      begun: number;
      sent: number | null;
      completing: number | null;
      finished: number | null;
      publishing: number | null;
    }>(
      `SELECT a.event_id::text AS event_id,
              extract(epoch FROM a.started_at)::float8 * 1000 AS begun,
              extract(epoch FROM a.sent_at)::float8 * 1000 AS sent,
              extract(epoch FROM o.created_at)::float8 * 1000 AS completing,
              extract(epoch FROM a.finished_at)::float8 * 1000 AS finished,
              extract(epoch FROM o.published_at)::float8 * 1000 AS publishing
         FROM command_attempts a
         LEFT JOIN outbox o
           ON convert_from(o.value, 'UTF8')::jsonb -> 'data' ->> 'sourceEventId' = a.event_id::text
        WHERE a.event_id = ANY($1::uuid[])`,
      [eventIds],
    );
    const result = new Map<string, EventMilestones>();
    for (const row of rows) {
      if (row.completing === null || row.finished === null || row.publishing === null) continue;
      result.set(row.event_id, {
        begun: row.begun,
        sent: row.sent,
        completing: row.completing,
        finished: row.finished,
        publishing: row.publishing,
      });
    }
    return result;
  } finally {
    await client.end();
  }
}

/** Transactions committed in the database so far (pg_stat_database; the stats lag ~0.5 s). */
export async function commitsSoFar(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ commits: string }>(
      `SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()`,
    );
    return Number(rows[0]?.commits ?? 0);
  } finally {
    await client.end();
  }
}

/** Applies the worker's migrations to `url` (the build's migrate.js, as the worker would). */
export async function migrateDatabase(url: string): Promise<void> {
  const migrate = fileURLToPath(new URL('../../src/database/migrate.js', import.meta.url));
  const { code, output } = await new Promise<{ code: number | null; output: string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, [migrate], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DATABASE_URL: url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (exitCode) => resolve({ code: exitCode, output: text }));
    },
  );
  if (code !== 0) throw new Error(`migrating ${url} failed (${String(code)}): ${output.trim()}`);
}
