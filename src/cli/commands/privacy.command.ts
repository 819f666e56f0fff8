/**
 * `privacy export (--order ID | --customer-number N)` and `privacy erase (--order ID |
 * --customer-number N) [--by NAME]` (CONTRACT §10; src/privacy, PRIVACY_FEATURE). Both read
 * and write Postgres only: no Kafka, no Payflow.
 */
import { Command, Option, SubCommand } from 'nest-commander';
import type { ErasureOutcome } from '../../privacy/erase/privacy-erase.service.js';
import { PrivacyEraseService } from '../../privacy/erase/privacy-erase.service.js';
import { PrivacyExportService } from '../../privacy/export/privacy-export.service.js';
import {
  describeSelection,
  parsePrivacySelection,
  type PrivacySelection,
} from '../../privacy/privacy-selection.js';
import { PRIVACY_FEATURE } from '../cli.features.js';
import { CliCommand, operatorName, parseOperatorName, usage } from './cli-command.js';

interface SelectionOptions {
  readonly order?: string;
  readonly customerNumber?: string;
}

const ORDER_OPTION = { flags: '--order <id>', description: 'the ERP order id' };
const CUSTOMER_OPTION = {
  flags: '--customer-number <n>',
  description: 'every order whose payment request named this ERP customer number',
};

/** Whose data: checked once the options are parsed (exactly one of the two). */
abstract class PrivacySubCommand extends CliCommand {
  protected selection(args: string[], options: SelectionOptions): PrivacySelection {
    this.noExtraArguments(args);
    return usage(() => parsePrivacySelection(options));
  }
}

@SubCommand({
  name: 'export',
  description:
    'all personal data the bridge holds for the orders, as JSON on stdout (customer ' +
    'numbers, payment links, file names, and every stored event, status event and webhook ' +
    'that holds personal data, as stored). Changes nothing',
})
export class PrivacyExportCommand extends PrivacySubCommand {
  @Option(ORDER_OPTION)
  parseOrder(value: string): string {
    return value;
  }

  @Option(CUSTOMER_OPTION)
  parseCustomerNumber(value: string): string {
    return value;
  }

  async run(args: string[], options: SelectionOptions = {}): Promise<void> {
    const selection = this.selection(args, options);
    const context = await this.features.open([PRIVACY_FEATURE]);
    const exported = await context.get(PrivacyExportService).export(selection);
    this.runtime.out(JSON.stringify(exported, null, 2));
  }
}

@SubCommand({
  name: 'erase',
  description:
    'removes every copy of personal data the bridge holds for the orders (dead letters, ' +
    'outbox rows, webhooks, customer numbers, payment links, file names), keeping ids, ' +
    'amounts, states and the order of events; recorded (privacy_erasures); idempotent. An ' +
    'erased dead letter is never replayed',
})
export class PrivacyEraseCommand extends PrivacySubCommand {
  @Option(ORDER_OPTION)
  parseOrder(value: string): string {
    return value;
  }

  @Option(CUSTOMER_OPTION)
  parseCustomerNumber(value: string): string {
    return value;
  }

  @Option({
    flags: '--by <name>',
    description: 'who erases, for the record (default: the OS user name)',
  })
  parseBy(value: string): string {
    return parseOperatorName(value);
  }

  async run(args: string[], options: SelectionOptions & { by?: string } = {}): Promise<void> {
    const selection = this.selection(args, options);
    const context = await this.features.open([PRIVACY_FEATURE]);
    const outcome = await context
      .get(PrivacyEraseService)
      .erase({ selection, erasedBy: operatorName(options.by) });
    this.runtime.out(describeErasure(selection, outcome));
  }
}

@Command({
  name: 'privacy',
  description: 'personal data held for orders: export it, erase it',
  subCommands: [PrivacyExportCommand, PrivacyEraseCommand],
})
export class PrivacyCommand extends CliCommand {
  run(args: string[]): Promise<void> {
    this.requireSubcommand(args);
  }
}

/** What an erasure did, for the person who asked: counts and ids, no personal data. */
export function describeErasure(selection: PrivacySelection, outcome: ErasureOutcome): string {
  const about = describeSelection(selection);
  if (outcome.orderIds.length === 0) {
    return `Nothing to erase: the bridge holds nothing of ${about}.`;
  }
  const orders = `${outcome.orderIds.length} order(s): ${outcome.orderIds.slice(0, 20).join(', ')}${
    outcome.orderIds.length > 20 ? ` and ${outcome.orderIds.length - 20} more` : ''
  }`;
  if (outcome.changed === 0) {
    const previous = outcome.previous;
    return [
      `Nothing changed: no personal data is left to erase for ${about} (${orders}).`,
      ...(previous === null
        ? []
        : [
            `Erased before: erasure #${previous.id} at ${previous.erasedAt.toISOString()} by ${previous.erasedBy}.`,
          ]),
    ].join('\n');
  }
  const counts = Object.entries(outcome.counts)
    .filter(([, n]) => n > 0)
    .map(([store, n]) => `${store} ${n}`)
    .join(', ');
  return [
    `Erased the personal data of ${about} (${orders}): ${outcome.changed} row(s) changed (${counts}).`,
    `Recorded as erasure #${outcome.record?.id ?? '?'}. Erased dead letters can no longer be replayed.`,
  ].join('\n');
}
