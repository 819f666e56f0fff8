/**
 * A private Postgres server for the fault campaign: its own data folder (initdb) and a free
 * 127.0.0.1 port, so that restarting it as a fault leaves the machine's shared server (and
 * whatever else runs on it: other test runs, CI) alone. Uses the machine's Postgres binaries
 * (/usr/lib/postgresql/<version>/bin); run as root, the server runs as the `postgres` user,
 * since initdb and postgres refuse to run as root. Trust authentication, user postgres.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePorts } from './kafka/kraft-cluster.js';

const execFileAsync = promisify(execFile);

export class PostgresInstance {
  private constructor(
    private readonly bin: string,
    private readonly root: string,
    readonly port: number,
  ) {}

  /** initdb, then start; resolves when it accepts connections. */
  static async start(): Promise<PostgresInstance> {
    const bin = await postgresBin();
    const root = await mkdtemp(join(tmpdir(), 'pfb-postgres-'));
    await chmod(root, 0o755);
    const [port] = await freePorts(1);
    if (port === undefined) throw new Error('no free port for Postgres');
    const instance = new PostgresInstance(bin, root, port);
    await instance.asOwner(['initdb', '-D', instance.dataDir, '-U', 'postgres', '-A', 'trust']);
    const conf = join(instance.dataDir, 'postgresql.auto.conf');
    await writeFile(
      conf,
      [
        `port = ${port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${root}'`,
        'max_connections = 200',
        'shared_buffers = 128MB',
        '',
      ].join('\n'),
    );
    await instance.chownToPostgres(conf);
    await instance.pgCtl(['start', '-w', '-t', '60', '-l', join(root, 'postgres.log')]);
    return instance;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}`;
  }

  /** Creates a database and returns its URL. */
  async createDatabase(name: string): Promise<string> {
    const client = new pg.Client({ connectionString: `${this.url}/postgres` });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } finally {
      await client.end();
    }
    return `${this.url}/${name}`;
  }

  /** A fast restart: every session is cut, as in a failover or a crash-restart. */
  async restart(): Promise<void> {
    await this.pgCtl([
      'restart',
      '-m',
      'fast',
      '-w',
      '-t',
      '60',
      '-l',
      join(this.root, 'postgres.log'),
    ]);
  }

  async stop(): Promise<void> {
    await this.pgCtl(['stop', '-m', 'immediate', '-w']).catch(() => undefined);
    await rm(this.root, { recursive: true, force: true });
  }

  private get dataDir(): string {
    return join(this.root, 'data');
  }

  private pgCtl(args: readonly string[]): Promise<unknown> {
    return this.asOwner(['pg_ctl', '-D', this.dataDir, ...args]);
  }

  /** Runs a Postgres program as `postgres` when this process is root. */
  private async asOwner(command: readonly string[]): Promise<unknown> {
    const [program, ...args] = command;
    if (program === undefined) throw new Error('no program');
    const path = join(this.bin, program);
    if (process.getuid?.() === 0) {
      await this.chownToPostgres(this.root);
      return execFileAsync('runuser', ['-u', 'postgres', '--', path, ...args]);
    }
    return execFileAsync(path, args);
  }

  private async chownToPostgres(path: string): Promise<void> {
    if (process.getuid?.() !== 0) return;
    const { stdout } = await execFileAsync('id', ['-u', 'postgres']);
    const { stdout: gid } = await execFileAsync('id', ['-g', 'postgres']);
    await chown(path, Number(stdout.trim()), Number(gid.trim()));
  }
}

/** The newest /usr/lib/postgresql/<version>/bin with initdb. */
async function postgresBin(): Promise<string> {
  const base = '/usr/lib/postgresql';
  const versions = (await readdir(base))
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(base, version, 'bin');
    if (existsSync(join(bin, 'initdb'))) return bin;
  }
  throw new Error(`no Postgres binaries under ${base}`);
}
