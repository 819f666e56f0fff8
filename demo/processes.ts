/**
 * The demo's child processes (the sandbox and the worker), started as users start them:
 * `node <script>` with an environment of its own and the output in a log file.
 *
 * Each child gets a process group of its own (`detached`), so a Ctrl-C in the terminal
 * reaches only the demo, which then stops the children in order: the worker first (it
 * drains while the sandbox and the cluster are still there), then the sandbox. Their pids
 * are written to a file; a later run stops whatever a killed demo left behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent, fetch as undiciFetch } from 'undici';

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class ChildService {
  private exitInfo: Exit | undefined;
  readonly exited: Promise<Exit>;

  private constructor(
    readonly name: string,
    readonly script: string,
    readonly logFile: string,
    private readonly child: ChildProcess,
    readonly pid: number,
  ) {
    this.exited = new Promise<Exit>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
  }

  /** Starts `node script` with exactly `env`, stdout and stderr into `logFile` (truncated). */
  static start(
    name: string,
    script: string,
    env: Record<string, string>,
    logFile: string,
    cwd: string,
  ): ChildService {
    const fd = openSync(logFile, 'w');
    try {
      const child = spawn(process.execPath, [script], {
        cwd,
        env,
        stdio: ['ignore', fd, fd],
        detached: true,
      });
      if (child.pid === undefined) {
        throw new Error(`could not start the ${name} (node ${script})`);
      }
      return new ChildService(name, script, logFile, child, child.pid);
    } finally {
      closeSync(fd);
    }
  }

  /** The exit, once the process has ended. */
  get exit(): Exit | undefined {
    return this.exitInfo;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** Sends `signal` to the child's process group (the child and anything it started). */
  signal(signal: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      // Already gone.
    }
  }

  /**
   * SIGTERM, then SIGKILL if it is still running after `graceMs`. Resolves with how it
   * ended and how long that took.
   */
  async stop(graceMs: number): Promise<{ exit: Exit; ms: number; killed: boolean }> {
    const started = Date.now();
    if (!this.running && this.exitInfo) return { exit: this.exitInfo, ms: 0, killed: false };
    this.signal('SIGTERM');
    const timer = delay(graceMs, 'timeout' as const);
    const first = await Promise.race([this.exited, timer]);
    if (first !== 'timeout') return { exit: first, ms: Date.now() - started, killed: false };
    this.signal('SIGKILL');
    const exit = await this.exited;
    return { exit, ms: Date.now() - started, killed: true };
  }

  /** How it ended ("exit code 1", "signal SIGKILL"), or "running". */
  describeExit(): string {
    return this.exitInfo === undefined ? 'running' : ChildService.describe(this.exitInfo);
  }

  /** Describes how a process ended, e.g. "exit code 1" or "signal SIGKILL". */
  static describe(exit: Exit): string {
    return exit.signal === null ? `exit code ${String(exit.code)}` : `signal ${exit.signal}`;
  }
}

/** `count` distinct TCP ports that were free a moment ago on 127.0.0.1. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => net.createServer());
  try {
    // All listening at once, so the ports differ.
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen(0, '127.0.0.1', () => {
              const address = server.address();
              if (address === null || typeof address === 'string') reject(new Error('no port'));
              else resolve(address.port);
            });
          }),
      ),
    );
  } finally {
    await Promise.all(
      servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    );
  }
}

/**
 * Polls `url` until it answers 2xx. Gives up when `child` exits, after `timeoutMs`, or when
 * `cancelled()` says so; returns what happened. An https `url` is checked against `ca`
 * (the certificate that signed the server's, PEM) and nothing else.
 */
export async function waitUntilUp(
  url: string,
  child: ChildService,
  timeoutMs: number,
  cancelled: () => boolean,
  ca?: string,
): Promise<'up' | 'exited' | 'timeout' | 'cancelled'> {
  const deadline = Date.now() + timeoutMs;
  const dispatcher = ca === undefined ? undefined : new Agent({ connect: { ca } });
  try {
    for (;;) {
      if (cancelled()) return 'cancelled';
      if (!child.running) return 'exited';
      try {
        const response = await undiciFetch(url, {
          signal: AbortSignal.timeout(2_000),
          ...(dispatcher === undefined ? {} : { dispatcher }),
        });
        await response.arrayBuffer();
        if (response.ok) return 'up';
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) return 'timeout';
      await delay(100);
    }
  } finally {
    await dispatcher?.close();
  }
}

// ------------------------------------------------------------- leftovers of a killed demo

interface PidRecord {
  readonly pid: number;
  readonly script: string;
}

/** Remembers the children, so that a run after a killed demo can stop them. */
export function writePidFile(file: string, children: readonly ChildService[]): void {
  const records: PidRecord[] = children.map((child) => ({ pid: child.pid, script: child.script }));
  writeFileSync(file, `${JSON.stringify(records)}\n`);
}

export function removePidFile(file: string): void {
  rmSync(file, { force: true });
}

/**
 * Stops the processes of an earlier demo that died without stopping them (SIGKILL, a
 * closed terminal). Only pids from the demo's own file whose command line still runs the
 * same script are touched. Returns how many were stopped.
 */
export async function stopLeftovers(file: string): Promise<number> {
  let records: PidRecord[];
  try {
    records = JSON.parse(readFileSync(file, 'utf8')) as PidRecord[];
  } catch {
    return 0;
  }
  const alive = records.filter((record) => runs(record.pid, record.script));
  for (const record of alive) {
    try {
      process.kill(-record.pid, 'SIGKILL');
    } catch {
      try {
        process.kill(record.pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  }
  for (let i = 0; i < 50 && alive.some((record) => runs(record.pid, record.script)); i++) {
    await delay(100);
  }
  removePidFile(file);
  return alive.length;
}

function runs(pid: number, script: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(script);
  } catch {
    return false;
  }
}
