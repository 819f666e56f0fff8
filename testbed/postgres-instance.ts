/**
 * A private Postgres server for the fault campaign: its own data folder (initdb) and a free
 * 127.0.0.1 port, so that restarting it as a fault leaves the machine's shared server (and
 * whatever else runs on it: other test runs, CI) alone. Uses the machine's Postgres binaries
 * (/usr/lib/postgresql/<version>/bin); run as root, the server runs as the `postgres` user,
 * since initdb and postgres refuse to run as root. Trust authentication, user postgres.
 *
 * With `tls` it is a secured server instead: `ssl = on` with the given certificate and key
 * (owned by postgres, mode 0600, as Postgres demands), a pg_hba.conf whose only network
 * lines are `hostssl … scram-sha-256` (so a client without TLS finds no entry, and one with
 * a wrong password is refused), password_encryption = scram-sha-256, and `password` set for
 * the user postgres. The test bed itself administers it over its Unix socket (trust).
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

export interface PostgresInstanceOptions {
  /**
   * A TLS-only server with SCRAM passwords: its certificate and key (PEM), and the password
   * of the user postgres.
   */
  readonly tls?: { readonly cert: string; readonly key: string; readonly password: string };
}

export class PostgresInstance {
  private constructor(
    private readonly bin: string,
    private readonly root: string,
    readonly port: number,
    /** Whether the server accepts network connections over TLS only. */
    readonly tls: boolean,
  ) {}

  /** initdb, then start; resolves when it accepts connections. */
  static async start(options: PostgresInstanceOptions = {}): Promise<PostgresInstance> {
    const bin = await postgresBin();
    const root = await mkdtemp(join(tmpdir(), 'pfb-postgres-'));
    await chmod(root, 0o755);
    const [port] = await freePorts(1);
    if (port === undefined) throw new Error('no free port for Postgres');
    const { tls } = options;
    const instance = new PostgresInstance(bin, root, port, tls !== undefined);
    await instance.asOwner(['initdb', '-D', instance.dataDir, '-U', 'postgres', '-A', 'trust']);
    const settings = [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${root}'`,
      'max_connections = 200',
      'shared_buffers = 128MB',
    ];
    if (tls !== undefined) settings.push(...(await instance.secure(tls)));
    const conf = join(instance.dataDir, 'postgresql.auto.conf');
    await writeFile(conf, [...settings, ''].join('\n'));
    await instance.chownToPostgres(conf);
    await instance.pgCtl(['start', '-w', '-t', '60', '-l', join(root, 'postgres.log')]);
    if (tls !== undefined) {
      await instance.admin((client) =>
        // Hashed with SCRAM (password_encryption); a literal, since ALTER ROLE takes no parameters.
        client.query(`ALTER ROLE postgres PASSWORD ${client.escapeLiteral(tls.password)}`),
      );
    }
    return instance;
  }

  /**
   * The server's URL, without database and without password. For a TLS instance, add
   * `?sslmode=…` and give the password as DATABASE_PASSWORD.
   */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}`;
  }

  /** The directory of the server's Unix socket (where the test bed administers it). */
  get socketDir(): string {
    return this.root;
  }

  /** Creates a database and returns its URL. */
  async createDatabase(name: string): Promise<string> {
    await this.admin((client) => client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
    return `${this.url}/${name}`;
  }

  /**
   * Runs `work` as postgres on `database`: over the Unix socket (trust) for a TLS instance,
   * whose network lines all want TLS and a password, else over TCP as always.
   */
  async admin<T>(work: (client: pg.Client) => Promise<T>, database = 'postgres'): Promise<T> {
    const client = new pg.Client(
      this.tls
        ? { host: this.root, port: this.port, user: 'postgres', database }
        : { connectionString: `${this.url}/${database}` },
    );
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
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

  /** Writes the key and certificate, and pg_hba.conf; returns the settings that use them. */
  private async secure(tls: NonNullable<PostgresInstanceOptions['tls']>): Promise<string[]> {
    const cert = join(this.root, 'server.crt');
    const key = join(this.root, 'server.key');
    await writeFile(cert, tls.cert, { mode: 0o600 });
    await writeFile(key, tls.key, { mode: 0o600 });
    const hba = join(this.dataDir, 'pg_hba.conf');
    await writeFile(
      hba,
      [
        '# TYPE   DATABASE USER ADDRESS      METHOD',
        'local    all      all               trust',
        'hostssl  all      all  127.0.0.1/32 scram-sha-256',
        'hostssl  all      all  ::1/128      scram-sha-256',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    for (const path of [cert, key, hba]) {
      await chmod(path, 0o600);
      await this.chownToPostgres(path);
    }
    return [
      'ssl = on',
      `ssl_cert_file = '${cert}'`,
      `ssl_key_file = '${key}'`,
      "password_encryption = 'scram-sha-256'",
    ];
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
