/**
 * Progress of `dlq replay` on stderr: a bar (cli-progress) on a terminal, plain lines
 * otherwise (logs, pipes, CI), so that nothing is lost to carriage returns.
 */
import type cliProgress from 'cli-progress';
import type {
  ReplayGroup,
  ReplayPlan,
  ReplayProgress,
} from '../../dead-letters/replay/dead-letter-replay.service.js';
import type { CliIo } from '../cli.runtime.js';
import { stderrBar } from './progress-bar.js';
import { StderrProgressLines } from './progress-lines.js';

function groupName(group: ReplayGroup): string {
  return group.orderId === null
    ? `key-less dead letter #${group.letters[0]?.id ?? '?'}`
    : `order ${group.orderId}`;
}

export function createReplayProgress(io: CliIo): ReplayProgress {
  return io.stderr.isTTY === true ? new BarProgress(io) : lineProgress(new StderrProgressLines(io));
}

function lineProgress(lines: StderrProgressLines): ReplayProgress {
  return {
    start: (plan) =>
      lines.start(
        plan.messages,
        `replaying ${plan.messages} message(s): ${plan.orders} order(s), ${plan.keyless} key-less`,
      ),
    advance: (group, messages) =>
      lines.step(messages, `replayed ${groupName(group)}: ${messages} message(s)`),
    stop: () => undefined,
  };
}

class BarProgress implements ReplayProgress {
  private readonly bar: cliProgress.SingleBar;
  private done = 0;
  private groups = 0;

  constructor(io: CliIo) {
    this.bar = stderrBar(
      io,
      'replaying [{bar}] {value}/{total} messages | {groups}/{totalGroups} orders | {current}',
    );
  }

  start(plan: ReplayPlan): void {
    this.bar.start(plan.messages, 0, {
      groups: 0,
      totalGroups: plan.groups.length,
      current: '',
    });
  }

  advance(group: ReplayGroup, messages: number): void {
    this.done += messages;
    this.groups += 1;
    this.bar.update(this.done, { groups: this.groups, current: groupName(group) });
  }

  stop(): void {
    this.bar.stop();
  }
}
