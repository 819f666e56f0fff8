/**
 * A longer Postgres outage than a restart: the private server of a PostgresInstance
 * (testbed/postgres-instance.ts) stopped in fast mode (every session ends with 57P01, new
 * connections are refused) and started again later, on the same data folder and port. A
 * restart is over in a second; an outage of several seconds is what lets the back-offs of
 * those who retry meanwhile grow, so that it shows how long they wait once it is back.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { PostgresInstance } from '../../testbed/postgres-instance.js';

const execFileAsync = promisify(execFile);

/** The newest /usr/lib/postgresql/<version>/bin/pg_ctl, as the instance itself uses. */
async function pgCtl(): Promise<string> {
  const base = '/usr/lib/postgresql';
  const versions = (await readdir(base))
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const path = join(base, version, 'bin', 'pg_ctl');
    if (existsSync(path)) return path;
  }
  throw new Error(`no pg_ctl under ${base}`);
}

/** pg_ctl on the instance's data folder, as the user postgres when this process is root. */
async function run(instance: PostgresInstance, args: readonly string[]): Promise<void> {
  // The instance keeps its data folder and log beside its socket (PostgresInstance.start).
  const root = instance.socketDir;
  const command = [await pgCtl(), '-D', join(root, 'data'), ...args];
  if (process.getuid?.() === 0) {
    await execFileAsync('runuser', ['-u', 'postgres', '--', ...command]);
  } else {
    const [program, ...rest] = command;
    await execFileAsync(program as string, rest);
  }
}

/** Stops the server in fast mode; resolves once it is down. */
export async function stopPostgres(instance: PostgresInstance): Promise<void> {
  await run(instance, ['stop', '-m', 'fast', '-w', '-t', '60']);
}

/** Starts the server again; resolves once it accepts connections. */
export async function startPostgres(instance: PostgresInstance): Promise<void> {
  await run(instance, ['start', '-w', '-t', '60', '-l', join(instance.socketDir, 'postgres.log')]);
}
