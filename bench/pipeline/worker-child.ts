/**
 * The worker as a child process: the real `node dist/src/main.js`, configured only through
 * environment variables, so that its CPU and memory are its own. Its pino lines are read
 * from stdout: "order events: consuming" marks the start of consumption; warnings and
 * errors are kept for the report.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface WorkerChildOptions {
  /** The worker's environment (the child gets nothing else but PATH and HOME). */
  readonly env: Record<string, string>;
  /** Write a V8 CPU profile (`--cpu-prof`) into this directory. */
  readonly cpuProfileDir?: string;
  /** Extra node flags, e.g. --trace-gc. */
  readonly nodeArgs?: readonly string[];
  /** The worker's entry point. Default: this build's dist/src/main.js. */
  readonly main?: string;
  /** Append everything the worker writes to this file. */
  readonly logFile?: string;
  /** Give up when the worker is not consuming after this long. Default 60 s. */
  readonly startTimeoutMs?: number;
}

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly line: string;
}

export class WorkerChild {
  /** performance.now() when the worker logged that it consumes (its group join is done). */
  consumingAt: number | undefined;
  /** Port of the worker's HTTP listener (health, /metrics), from its start-up line. */
  httpPort: number | undefined;
  /** Warnings and errors (level >= 40), the first 50. */
  readonly problems: LogLine[] = [];
  problemCount = 0;
  private readonly tail: string[] = [];
  private exited: Promise<number | null>;
  private consumingWaiters: ((at: number) => void)[] = [];

  private constructor(
    private readonly child: ChildProcess,
    private readonly log: WriteStream | undefined,
  ) {
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
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

  /** The last lines the worker wrote (for a failure message). */
  lastLines(count = 20): string[] {
    return this.tail.slice(-count);
  }

  static async start(options: WorkerChildOptions): Promise<WorkerChild> {
    const main = options.main ?? fileURLToPath(new URL('../../src/main.js', import.meta.url));
    const args: string[] = [...(options.nodeArgs ?? [])];
    if (options.cpuProfileDir !== undefined) {
      mkdirSync(options.cpuProfileDir, { recursive: true });
      args.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`);
    }
    const child = spawn(process.execPath, [...args, main], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log =
      options.logFile === undefined
        ? undefined
        : createWriteStream(options.logFile, { flags: 'a' });
    const worker = new WorkerChild(child, log);
    const timeoutMs = options.startTimeoutMs ?? 60_000;
    const started = await Promise.race([
      worker.waitConsuming().then(() => 'consuming' as const),
      worker.exited.then(() => 'exited' as const),
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref()),
    ]);
    if (started !== 'consuming') {
      await worker.kill();
      throw new Error(
        `the worker ${started === 'exited' ? 'exited' : `was not consuming after ${timeoutMs} ms`}; last lines:\n${worker.lastLines().join('\n')}`,
      );
    }
    return worker;
  }

  /** SIGTERM (graceful drain), then SIGKILL after `timeoutMs`. Resolves with the exit code. */
  async stop(timeoutMs = 35_000): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.exited;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  private waitConsuming(): Promise<number> {
    if (this.consumingAt !== undefined) return Promise.resolve(this.consumingAt);
    return new Promise((resolve) => this.consumingWaiters.push(resolve));
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    this.remember(line);
    let parsed: { level?: unknown; msg?: unknown; port?: unknown };
    try {
      parsed = JSON.parse(line) as { level?: unknown; msg?: unknown; port?: unknown };
    } catch {
      return;
    }
    const level = typeof parsed.level === 'number' ? parsed.level : 0;
    const msg = typeof parsed.msg === 'string' ? parsed.msg : '';
    if (msg === 'payflow-bridge started' && typeof parsed.port === 'number') {
      this.httpPort = parsed.port;
    }
    if (msg === 'order events: consuming' && this.consumingAt === undefined) {
      this.consumingAt = performance.now();
      for (const wake of this.consumingWaiters.splice(0)) wake(this.consumingAt);
    }
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
