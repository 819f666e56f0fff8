/**
 * The progress the CLI writes when stderr is not a terminal (logs, pipes, CI): plain lines,
 * so that nothing is lost to carriage returns, each step saying how far the run is.
 */
import type { CliIo } from '../cli.runtime.js';

export class StderrProgressLines {
  private done = 0;
  private total = 0;

  constructor(private readonly io: CliIo) {}

  /** The run's first line; `total` is what the steps count up to. */
  start(total: number, line: string): void {
    this.total = total;
    this.io.stderr.write(`${line}\n`);
  }

  /** A step of `count` done: its line, then `(done/total)`. */
  step(count: number, line: string): void {
    this.done += count;
    this.io.stderr.write(`${line} (${this.done}/${this.total})\n`);
  }
}
