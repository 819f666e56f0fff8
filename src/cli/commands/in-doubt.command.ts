/**
 * `in-doubt list [--json]` and `in-doubt resolve ORDER (--payment PAYFLOW_ID |
 * --not-created) [--by NAME]` (CONTRACT §8): a person's way out of a Payflow call in doubt.
 * `list` reads through src/operator (OperatorReadsModule); `resolve` asks InDoubtService of
 * src/orders/in-doubt (InDoubtModule: the resolver the webhooks use, the order's call in
 * doubt read through the same query, and the dead-letter replay of `dlq replay` with the
 * CLI's outbox relay; IN_DOUBT_RESOLVE_FEATURE). Kafka and Payflow are reached only when a
 * verdict needs them.
 */
import { Command, Option, SubCommand } from 'nest-commander';
import { Database } from '../../database/database.js';
import { InDoubtListQuery } from '../../operator/in-doubt/in-doubt-list.query.js';
import {
  inDoubtItem,
  renderInDoubtList,
  renderWaitingList,
} from '../../operator/in-doubt/in-doubt-list.view.js';
import { OperatorReadsModule } from '../../operator/operator-reads.module.js';
import { InDoubtService, type Verdict } from '../../orders/in-doubt/in-doubt.service.js';
import { IN_DOUBT_RESOLVE_FEATURE } from '../cli.features.js';
import { UsageError } from '../cli.runtime.js';
import { CliCommand, operatorName, parseOperatorName, usage } from './cli-command.js';

const PAYFLOW_ID = /^[A-Za-z0-9_-]{1,100}$/;

@SubCommand({
  name: 'list',
  description:
    'orders whose Payflow call is in doubt: what was sent, whether and when the request left, ' +
    'the error, what the bridge knows and the webhooks Payflow sent for the payment; then ' +
    'the calls waiting for a late effect (not sent again before their window ends)',
})
export class InDoubtListCommand extends CliCommand {
  @Option({ flags: '--json', description: 'machine-readable output (docs/operations.md)' })
  parseJson(): boolean {
    return true;
  }

  async run(args: string[], options: { json?: boolean } = {}): Promise<void> {
    this.noExtraArguments(args);
    const context = await this.features.open([OperatorReadsModule]);
    const query = context.get(InDoubtListQuery);
    const sql = context.get(Database).sql;
    const now = new Date();
    const items = (await query.list(sql)).map((row) => inDoubtItem(row, now));
    const waiting = (await query.held(sql)).map((row) => inDoubtItem(row, now));
    this.runtime.out(
      options.json === true
        ? JSON.stringify({ inDoubt: items, waitingForLateEffect: waiting }, null, 2)
        : `${renderInDoubtList(items)}\n${renderWaitingList(waiting)}`,
    );
  }
}

interface ResolveOptions {
  readonly payment?: string;
  readonly notCreated?: boolean;
  readonly by?: string;
}

@SubCommand({
  name: 'resolve',
  arguments: '<order>',
  description:
    "a person's verdict on the order's Payflow call in doubt: --payment PAYFLOW_ID adopts the " +
    'payment found at Payflow (checked: same organization, total and currency), --not-created ' +
    "marks the call as never taken; then the order's parked events are republished. Idempotent",
  argsDescription: { order: 'the ERP order id' },
})
export class InDoubtResolveCommand extends CliCommand {
  @Option({ flags: '--payment <payflowId>', description: "Payflow's id of the payment found" })
  parsePayment(value: string): string {
    return usage(() => {
      if (!PAYFLOW_ID.test(value)) throw new Error(`--payment: not a Payflow id: "${value}"`);
      return value;
    });
  }

  @Option({ flags: '--not-created', description: 'Payflow never applied the call' })
  parseNotCreated(): boolean {
    return true;
  }

  @Option({
    flags: '--by <name>',
    description: 'who decides, for the order history (default: the OS user name)',
  })
  parseBy(value: string): string {
    return parseOperatorName(value);
  }

  async run(args: string[], options: ResolveOptions = {}): Promise<void> {
    const [orderId, ...rest] = args;
    this.noExtraArguments(rest);
    if (orderId === undefined) throw new UsageError('missing the order id');
    const verdict = this.verdict(options);
    // Payflow only for --payment; Kafka only once the verdict is recorded (the replay).
    const context = await this.features.open([IN_DOUBT_RESOLVE_FEATURE], {
      payflow: verdict.kind === 'payment_found',
    });
    const outcome = await context.get(InDoubtService).resolve({
      orderId,
      verdict,
      decidedBy: operatorName(options.by),
    });
    this.runtime.out(outcome.lines.join('\n'));
  }

  private verdict(options: ResolveOptions): Verdict {
    if (options.payment !== undefined && options.notCreated === true) {
      throw new UsageError('give either --payment PAYFLOW_ID or --not-created, not both');
    }
    if (options.payment !== undefined) return { kind: 'payment_found', payflowId: options.payment };
    if (options.notCreated === true) return { kind: 'not_created' };
    throw new UsageError('give --payment PAYFLOW_ID or --not-created');
  }
}

@Command({
  name: 'in-doubt',
  description: 'Payflow calls that may or may not have taken effect',
  subCommands: [InDoubtListCommand, InDoubtResolveCommand],
})
export class InDoubtCommand extends CliCommand {
  run(args: string[]): Promise<void> {
    this.requireSubcommand(args);
  }
}
