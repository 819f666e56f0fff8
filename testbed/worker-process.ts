/**
 * The worker as a child process: the real `node dist/src/main.js`, configured only through
 * environment variables, so that its CPU and memory are its own and it can be killed like a
 * real replica (SIGKILL). Shared by the pipeline benchmark, the fault tests and the chaos
 * campaign; needs a build (`tsc -p tsconfig.build.json`).
 *
 * Its pino lines are read from stdout: "payflow-bridge started" gives the public port
 * (webhooks) and the management port (health, /metrics), "order events: consuming" marks the
 * start of consumption, "partition assignment changed" lines are counted, and warnings and
 * errors are kept for the report. Unless the environment says otherwise, the management
 * listener gets a port the system chooses on the loopback (several workers share a host).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, fetch } from 'undici';
import { killWhenOwnerDies } from './kafka/kraft-cluster.js';

export interface WorkerProcessOptions {
  /** The worker's environment (the child gets nothing else but PATH and HOME). */
  readonly env: Record<string, string>;
  /** Write a V8 CPU profile (`--cpu-prof`) into this directory. */
  readonly cpuProfileDir?: string;
  /** Extra node flags, e.g. --trace-gc. */
  readonly nodeArgs?: readonly string[];
  /** The worker's entry point. Default: this repository's dist/src/main.js. */
  readonly main?: string;
  /** Append everything the worker writes to this file. */
  readonly logFile?: string;
  /** Give up when the worker is not consuming (or started) after this long. Default 60 s. */
  readonly startTimeoutMs?: number;
  /**
   * What start() waits for: `consuming` (default; the group join is done) or `started`
   * (the HTTP listener is up; a worker started while Kafka is down never gets further).
   */
  readonly waitFor?: 'consuming' | 'started';
  /** The CA that signed the worker's TLS certificate (TLS_CERT_FILE), for `getPublic`. */
  readonly ca?: string;
}

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly line: string;
}

/** The entry point of this repository's build, whether this file runs from dist or source. */
export function builtWorkerMain(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '../src/main.js'), join(here, '../dist/src/main.js')];
  return candidates.find((candidate) => existsSync(candidate)) ?? (candidates[1] as string);
}

export class WorkerProcess {
  /** performance.now() when the worker first logged that it consumes (its group join is done). */
  consumingAt: number | undefined;
  /** Port of the worker's public listener (webhooks), from its start-up line. */
  httpPort: number | undefined;
  /** Whether the public listener serves HTTPS. */
  tls = false;
  /** Port of the worker's management listener (health, /metrics; plain HTTP). */
  managementPort: number | undefined;
  /** "partition assignment changed" lines so far (rebalances this worker took part in). */
  assignments = 0;
  /** Partitions of the last assignment. */
  assigned: readonly string[] = [];
  /** Warnings and errors (level >= 40), the first 50. */
  readonly problems: LogLine[] = [];
  problemCount = 0;
  /** Lines at level fatal (60). */
  fatalCount = 0;
  private readonly tail: string[] = [];
  private readonly exited: Promise<number | null>;
  private exitCodeValue: number | null | undefined;
  private consumingWaiters: ((at: number) => void)[] = [];
  private startedWaiters: (() => void)[] = [];
  private dispatcher: Agent | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly log: WriteStream | undefined,
    private readonly ca: string | undefined,
  ) {
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        this.exitCodeValue = code;
        this.log?.end();
        resolve(code);
      }),
    );
    let buffered = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      this.log?.write(chunk);
      buffered += chunk;
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        this.onLine(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.log?.write(chunk);
      for (const line of chunk.split('\n')) if (line.trim() !== '') this.remember(line);
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Still running (not exited, not killed). */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The exit code once it exited (null after a signal), undefined while it runs. */
  get exitCode(): number | null | undefined {
    return this.exitCodeValue;
  }

  /** Base URL of the public listener (http or https), once started. */
  get url(): string | undefined {
    return this.httpPort === undefined
      ? undefined
      : `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.httpPort}`;
  }

  /** Base URL of the management listener (plain http), once started. */
  get managementUrl(): string | undefined {
    return this.managementPort === undefined
      ? undefined
      : `http://127.0.0.1:${this.managementPort}`;
  }

  /** The last lines the worker wrote (for a failure message). */
  lastLines(count = 20): string[] {
    return this.tail.slice(-count);
  }

  static async start(options: WorkerProcessOptions): Promise<WorkerProcess> {
    const main = options.main ?? builtWorkerMain();
    if (!existsSync(main)) throw new Error(`${main} is missing: build first (npm run build)`);
    const args: string[] = [...(options.nodeArgs ?? [])];
    if (options.cpuProfileDir !== undefined) {
      mkdirSync(options.cpuProfileDir, { recursive: true });
      args.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`);
    }
    const child = spawn(process.execPath, [...args, main], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        MANAGEMENT_PORT: '0',
        MANAGEMENT_HOST: '127.0.0.1',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) killWhenOwnerDies(child.pid);
    const log =
      options.logFile === undefined
        ? undefined
        : createWriteStream(options.logFile, { flags: 'a' });
    const worker = new WorkerProcess(child, log, options.ca);
    const timeoutMs = options.startTimeoutMs ?? 60_000;
    const waitFor = options.waitFor ?? 'consuming';
    const started = await Promise.race([
      (waitFor === 'consuming' ? worker.waitConsuming() : worker.waitStarted()).then(
        () => 'ready' as const,
      ),
      worker.exited.then(() => 'exited' as const),
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref()),
    ]);
    if (started !== 'ready') {
      await worker.kill();
      throw new Error(
        `the worker ${started === 'exited' ? 'exited' : `was not ${waitFor} after ${timeoutMs} ms`}; last lines:\n${worker.lastLines().join('\n')}`,
      );
    }
    return worker;
  }

  /** SIGTERM (graceful drain), then SIGKILL after `timeoutMs`. Resolves with the exit code. */
  async stop(timeoutMs = 35_000): Promise<number | null> {
    if (!this.alive) return this.exited;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
      await this.closeDispatcher();
    }
  }

  /** SIGKILL: a crash (nothing drained, nothing committed, no group leave). */
  async kill(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
    await this.closeDispatcher();
  }

  /** Resolves with the exit code when the process ends. */
  waitExit(): Promise<number | null> {
    return this.exited;
  }

  /**
   * GET a path of the worker's management listener (/health/…, /metrics): its status and
   * JSON body (the text when the body is not JSON); status 0 when it does not answer within
   * `timeoutMs`.
   */
  get(path: string, timeoutMs = 3_000): Promise<{ status: number; body: unknown }> {
    return this.fetchFrom(this.managementUrl, path, timeoutMs);
  }

  /** GET a path of the worker's public listener (webhooks only), as `get` does. */
  getPublic(path: string, timeoutMs = 3_000): Promise<{ status: number; body: unknown }> {
    if (this.tls && this.ca !== undefined)
      this.dispatcher ??= new Agent({ connect: { ca: this.ca } });
    return this.fetchFrom(this.url, path, timeoutMs);
  }

  private async fetchFrom(
    base: string | undefined,
    path: string,
    timeoutMs: number,
  ): Promise<{ status: number; body: unknown }> {
    if (base === undefined) return { status: 0, body: undefined };
    try {
      const response = await fetch(`${base}${path}`, {
        signal: AbortSignal.timeout(timeoutMs),
        ...(this.dispatcher === undefined ? {} : { dispatcher: this.dispatcher }),
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      return { status: response.status, body };
    } catch {
      return { status: 0, body: undefined };
    }
  }

  /** A counter or gauge of GET /metrics summed over its label sets; undefined when unreachable. */
  async metric(name: string): Promise<number | undefined> {
    const { status, body } = await this.get('/metrics');
    if (status !== 200 || typeof body !== 'string') return undefined;
    let sum = 0;
    for (const line of body.split('\n')) {
      if (line.startsWith('#')) continue;
      if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) {
        sum += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  private async closeDispatcher(): Promise<void> {
    const dispatcher = this.dispatcher;
    this.dispatcher = undefined;
    await dispatcher?.close().catch(() => undefined);
  }

  private waitConsuming(): Promise<number> {
    if (this.consumingAt !== undefined) return Promise.resolve(this.consumingAt);
    return new Promise((resolve) => this.consumingWaiters.push(resolve));
  }

  private waitStarted(): Promise<void> {
    if (this.httpPort !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.startedWaiters.push(resolve));
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    this.remember(line);
    let parsed: {
      level?: unknown;
      msg?: unknown;
      port?: unknown;
      tls?: unknown;
      managementPort?: unknown;
      assigned?: unknown;
    };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      return;
    }
    const level = typeof parsed.level === 'number' ? parsed.level : 0;
    const msg = typeof parsed.msg === 'string' ? parsed.msg : '';
    if (msg === 'payflow-bridge started' && typeof parsed.port === 'number') {
      this.httpPort = parsed.port;
      this.tls = parsed.tls === true;
      if (typeof parsed.managementPort === 'number') this.managementPort = parsed.managementPort;
      for (const wake of this.startedWaiters.splice(0)) wake();
    }
    if (msg === 'order events: consuming' && this.consumingAt === undefined) {
      this.consumingAt = performance.now();
      for (const wake of this.consumingWaiters.splice(0)) wake(this.consumingAt);
    }
    if (msg === 'order events: partition assignment changed') {
      this.assignments++;
      if (Array.isArray(parsed.assigned)) this.assigned = parsed.assigned.map(String);
    }
    if (level >= 60) this.fatalCount++;
    if (level >= 40) {
      this.problemCount++;
      if (this.problems.length < 50) this.problems.push({ level, msg, line });
    }
  }

  private remember(line: string): void {
    this.tail.push(line.length > 2_000 ? `${line.slice(0, 2_000)}…` : line);
    if (this.tail.length > 200) this.tail.shift();
  }
}
