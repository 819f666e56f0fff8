/**
 * The loaded machine of docs/operations.md: N child processes that each spin one core for
 * the whole run (CHAOS_BUSY_LOOPS). They are this process's own children, stopped by their
 * pids at the end, and on any exit of this process (a failed run must not leave them
 * spinning).
 */
import { spawn, type ChildProcess } from 'node:child_process';

export class BusyLoops {
  private constructor(private readonly children: readonly ChildProcess[]) {}

  static start(count: number): BusyLoops {
    const children = Array.from({ length: count }, () =>
      spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
    );
    const loops = new BusyLoops(children);
    process.once('exit', () => loops.killNow());
    return loops;
  }

  get pids(): number[] {
    return this.children.flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
  }

  async stop(): Promise<void> {
    const exited = this.children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) resolve();
          else child.once('exit', () => resolve());
        }),
    );
    this.killNow();
    await Promise.all(exited);
  }

  private killNow(): void {
    for (const child of this.children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }
}
