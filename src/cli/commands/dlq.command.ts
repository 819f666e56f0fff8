import { Command, Option, SubCommand } from 'nest-commander';
import { DEAD_LETTER_REASONS, type DeadLetterReason } from '../../errors/app-error.js';
import {
  DeadLetterReplayService,
  type ReplayPlan,
  type ReplayResult,
} from '../../dead-letters/replay/dead-letter-replay.service.js';
import { ErasedLetterReplayError } from '../../dead-letters/replay/erased-letter.error.js';
import {
  parseOrderId,
  parseReason,
  parseSince,
  type ReplayFilter,
} from '../../dead-letters/replay/replay-filter.js';
import { sanitizeText } from '../../operator/masking/sanitize-text.js';
import { DLQ_REPLAY_FEATURE } from '../cli.features.js';
import { CliCommand, usage } from './cli-command.js';
import { DlqDiscardCommand } from './dlq-discard.command.js';
import { createReplayProgress } from './replay-progress.js';

interface ReplayOptions {
  readonly order?: string;
  readonly reason?: DeadLetterReason;
  readonly since?: Date;
  readonly dryRun?: boolean;
}

@SubCommand({
  name: 'replay',
  description:
    'republish dead letters to the input topic (TOPIC_ORDERS) in their original order. The ' +
    'filters select orders; every unreplayed dead letter of a selected order is replayed, ' +
    'and the order is unblocked',
})
export class DlqReplayCommand extends CliCommand {
  @Option({ flags: '--order <id>', description: 'only this order' })
  parseOrder(value: string): string {
    return usage(() => parseOrderId(value));
  }

  @Option({
    flags: '--reason <reason>',
    description: `orders with an unreplayed dead letter of this reason: ${DEAD_LETTER_REASONS.join(', ')}`,
  })
  parseReason(value: string): DeadLetterReason {
    return usage(() => parseReason(value));
  }

  @Option({
    flags: '--since <time>',
    description:
      'orders with an unreplayed dead letter that failed at or after this time: ' +
      '2026-11-21, 2026-11-21T10:00:00Z, or an age such as 30m, 12h, 7d',
  })
  parseSince(value: string): Date {
    return usage(() => parseSince(value));
  }

  @Option({ flags: '--dry-run', description: 'print what would be replayed; change nothing' })
  parseDryRun(): boolean {
    return true;
  }

  async run(args: string[], options: ReplayOptions = {}): Promise<void> {
    this.noExtraArguments(args);
    const filter: ReplayFilter = {
      ...(options.order === undefined ? {} : { orderId: options.order }),
      ...(options.reason === undefined ? {} : { reason: options.reason }),
      ...(options.since === undefined ? {} : { since: options.since }),
    };
    const context = await this.features.open([DLQ_REPLAY_FEATURE]);
    const service = context.get(DeadLetterReplayService);
    const topic = this.config.TOPIC_ORDERS;

    if (options.dryRun === true) {
      // A dry run plans only: it never publishes, so it never reaches Kafka.
      this.runtime.out(describePlan(await service.plan(filter), topic));
      return;
    }

    const planned = await service.plan(filter);
    const refusal = refusedOrder(planned);
    // One order asked for by name and refused: one line, exit 1.
    if (filter.orderId !== undefined && refusal !== null) throw refusal;

    // The relay flushes the buckets this replay wrote: Kafka first, before anything changes.
    await this.resources.outboxRelay();
    const plan = await service.plan(filter);
    if (plan.messages === 0) {
      this.runtime.out(
        ['Nothing to replay: no unreplayed dead letter matches.', ...describeRefused(plan)].join(
          '\n',
        ),
      );
      return;
    }
    const result = await service.replay(filter, createReplayProgress(this.runtime.io));
    this.runtime.out(describeResult(result, topic));
  }
}

@Command({
  name: 'dlq',
  description: 'dead letters of the order topic',
  subCommands: [DlqReplayCommand, DlqDiscardCommand],
})
export class DlqCommand extends CliCommand {
  run(args: string[]): Promise<void> {
    this.requireSubcommand(args);
  }
}

function reasons(byReason: Readonly<Record<string, number>>): string {
  const entries = Object.entries(byReason).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? 'none' : entries.map(([reason, n]) => `${reason} ${n}`).join(', ');
}

function counts(plan: ReplayPlan): string {
  const parts = [`${plan.messages} message(s) of ${plan.orders} order(s)`];
  if (plan.keyless > 0) parts.push(`${plan.keyless} key-less dead letter(s)`);
  return parts.join(' and ');
}

function describePlan(plan: ReplayPlan, topic: string): string {
  if (plan.messages === 0) {
    return [
      'Dry run: nothing to replay (no unreplayed dead letter matches).',
      ...describeRefused(plan),
    ].join('\n');
  }
  const lines = [`Dry run, nothing changed. Would replay ${counts(plan)} to ${topic}:`];
  for (const group of plan.groups) {
    lines.push(
      group.orderId === null
        ? '  (no order id)'
        : `  order ${group.orderId}: ${group.letters.length} message(s), then unblocked`,
    );
    for (const letter of group.letters) {
      lines.push(
        `    #${letter.id}  ${letter.failedAt.toISOString()}  ${letter.eventType ?? '-'}  ` +
          `${letter.reason}  ${sanitizeText(letter.error)}`,
      );
    }
  }
  lines.push(`Reasons: ${reasons(plan.byReason)}`);
  lines.push(...describeRefused(plan));
  return lines.join('\n');
}

function describeResult(result: ReplayResult, topic: string): string {
  const lines = [`Replayed ${counts(result)} to ${topic}.`];
  lines.push(`Reasons: ${reasons(result.byReason)}`);
  const orders = result.groups.flatMap((group) => (group.orderId === null ? [] : [group.orderId]));
  if (orders.length > 0) {
    const shown = orders.slice(0, 20).join(', ');
    lines.push(`Unblocked: ${shown}${orders.length > 20 ? ` and ${orders.length - 20} more` : ''}`);
  }
  if (result.skipped > 0) {
    lines.push(`Skipped ${result.skipped} dead letter(s) another replay had already taken.`);
  }
  lines.push(...describeRefused(result));
  return lines.join('\n');
}

/** The first refused group as the error a replay of it alone fails with, or null. */
function refusedOrder(plan: ReplayPlan): ErasedLetterReplayError | null {
  const group = plan.refused?.[0];
  const letter = group?.letters[0];
  return group === undefined || letter === undefined
    ? null
    : new ErasedLetterReplayError(group.orderId, letter.id);
}

/** One line per order refused because its personal data was erased. */
function describeRefused(plan: ReplayPlan): string[] {
  return (plan.refused ?? []).map((group) => {
    const name =
      group.orderId === null
        ? `dead letter #${group.letters[0]?.id ?? '?'}`
        : `order ${group.orderId}`;
    return `Refused ${name}: its personal data was erased (privacy erase); discard its dead letters or have the ERP send the events again.`;
  });
}
