/**
 * `dlq discard EVENT_ID --reason TEXT [--by NAME]` (CONTRACT §10): a dead letter that will
 * never take effect, discarded by a person, and the events parked behind it republished
 * (DeadLetterDiscardService of src/dead-letters/discard, with the CLI's outbox relay:
 * DLQ_DISCARD_FEATURE). Kafka is reached before anything changes.
 */
import { Option, SubCommand } from 'nest-commander';
import { DeadLetterDiscardService } from '../../dead-letters/discard/dead-letter-discard.service.js';
import {
  parseDiscardEventId,
  parseDiscardReason,
} from '../../dead-letters/discard/discard-input.js';
import { DLQ_DISCARD_FEATURE } from '../cli.features.js';
import { UsageError } from '../cli.runtime.js';
import { CliCommand, operatorName, parseOperatorName, usage } from './cli-command.js';

interface DiscardOptions {
  readonly reason?: string;
  readonly by?: string;
}

@SubCommand({
  name: 'discard',
  arguments: '<eventId>',
  description:
    'a dead letter that will never take effect: recorded discarded (who, when, why), one ' +
    'event.discarded published, and the events parked behind it republished in order (the ' +
    'order unblocked). Refused for in_doubt (those take a verdict: in-doubt resolve) and for ' +
    'an event that is not dead-lettered. Idempotent',
  argsDescription: { eventId: "the ERP event's eventId" },
})
export class DlqDiscardCommand extends CliCommand {
  @Option({
    flags: '--reason <text>',
    description:
      'why it will never take effect, one line (published in event.discarded: no personal data)',
  })
  parseReason(value: string): string {
    return usage(() => parseDiscardReason(value));
  }

  @Option({
    flags: '--by <name>',
    description: 'who discards, for the record (default: the OS user name)',
  })
  parseBy(value: string): string {
    return parseOperatorName(value);
  }

  async run(args: string[], options: DiscardOptions = {}): Promise<void> {
    const [given, ...rest] = args;
    this.noExtraArguments(rest);
    if (given === undefined) throw new UsageError('missing the event id');
    const eventId = usage(() => parseDiscardEventId(given));
    if (options.reason === undefined) {
      throw new UsageError('give --reason TEXT: why the event will never take effect');
    }
    const context = await this.features.open([DLQ_DISCARD_FEATURE]);
    // The relay publishes what the discard wrote: Kafka first, before anything changes.
    await this.resources.outboxRelay();
    const outcome = await context.get(DeadLetterDiscardService).discard({
      eventId,
      reason: options.reason,
      discardedBy: operatorName(options.by),
    });
    this.runtime.out(outcome.lines.join('\n'));
  }
}
