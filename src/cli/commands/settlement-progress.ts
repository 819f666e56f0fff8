/**
 * Progress of `settlements pull` on stderr: a bar (cli-progress) over the nights on a
 * terminal, with the current file's rows as they stream in; plain lines otherwise.
 */
import type cliProgress from 'cli-progress';
import type { PullProgress } from '../../settlements/pull/pull-settlement.command.js';
import type { CliIo } from '../cli.runtime.js';
import { stderrBar } from './progress-bar.js';
import { StderrProgressLines } from './progress-lines.js';

export interface SettlementPullProgress {
  start(nights: number): void;
  night(label: string): (progress: PullProgress) => void;
  done(label: string, outcome: string): void;
  stop(): void;
}

export function createSettlementProgress(io: CliIo): SettlementPullProgress {
  return io.stderr.isTTY === true ? new BarProgress(io) : lineProgress(new StderrProgressLines(io));
}

function lineProgress(lines: StderrProgressLines): SettlementPullProgress {
  return {
    start: (nights) => lines.start(nights, `pulling ${nights} night(s)`),
    night: () => () => undefined,
    done: (label, outcome) => lines.step(1, `${label}: ${outcome}`),
    stop: () => undefined,
  };
}

class BarProgress implements SettlementPullProgress {
  private readonly bar: cliProgress.SingleBar;
  private finished = 0;

  constructor(io: CliIo) {
    this.bar = stderrBar(io, 'pulling [{bar}] {value}/{total} nights | {current} {rows} rows');
  }

  start(nights: number): void {
    this.bar.start(nights, 0, { current: '', rows: 0 });
  }

  night(label: string): (progress: PullProgress) => void {
    this.bar.update(this.finished, { current: label, rows: 0 });
    return (progress) => this.bar.update(this.finished, { current: label, rows: progress.rows });
  }

  done(label: string, outcome: string): void {
    this.finished += 1;
    this.bar.update(this.finished, { current: `${label} ${outcome}` });
  }

  stop(): void {
    this.bar.stop();
  }
}
