/**
 * `in-doubt list [--json]` and `in-doubt resolve ORDER (--payment PAYFLOW_ID |
 * --not-created) [--by NAME]` (CONTRACT §8): a person's way out of a Payflow call in doubt.
 * `list` reads through src/operator/in-doubt; `resolve` only builds what src/orders/in-doubt
 * needs outside the worker (like `reconcile`): the database, the resolver the webhooks use,
 * a Payflow client for `--payment`, and the dead-letter replay of `dlq replay` with the
 * CLI's outbox relay, and reads the order's call in doubt through the same query.
 * Kafka and Payflow are reached only when a verdict needs them.
 */
import { userInfo } from 'node:os';
import { Command, Option, SubCommand } from 'nest-commander';
import { TransactionBatcher } from '../../database/transaction-batcher.js';
import { DeadLetterRepository } from '../../dead-letters/dead-letter.repository.js';
import { DeadLetterReplayService } from '../../dead-letters/replay/dead-letter-replay.service.js';
import { OutboxWriter, outboundTopicsFromConfig } from '../../outbox/outbox-writer.js';
import { CommandAttemptRepository } from '../../orders/engine/command-attempt.repository.js';
import {
  InDoubtService,
  type OrderReplayer,
  type Verdict,
} from '../../orders/in-doubt/in-doubt.service.js';
import { InDoubtVerdictRepository } from '../../orders/in-doubt/in-doubt-verdict.repository.js';
import { OrderRepository } from '../../orders/order.repository.js';
import { PaymentCreationResolver } from '../../orders/payment-requested/payment-creation.resolver.js';
import { ProcessedEventRepository } from '../../orders/processed-event.repository.js';
import { InDoubtListQuery } from '../../operator/in-doubt/in-doubt-list.query.js';
import { inDoubtItem, renderInDoubtList } from '../../operator/in-doubt/in-doubt-list.view.js';
import { outboxBucket, OutboxRepository } from '../../outbox/outbox.repository.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import { payflowClientOptionsFromConfig } from '../../payflow/payflow.module.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { loadCliPayflowConfig } from '../cli.config.js';
import { UsageError } from '../cli.runtime.js';
import { CliCommand, usage } from './cli-command.js';

const PAYFLOW_ID = /^[A-Za-z0-9_-]{1,100}$/;
const FLUSH_TIMEOUT_MS = 30_000;

/** `--by`, else the OS user name: one short line, never anything from the environment. */
function operatorName(given: string | undefined): string {
  if (given !== undefined) return given;
  try {
    const name = userInfo().username.trim();
    return name.length > 0 ? name.slice(0, 64) : 'unknown';
  } catch {
    return 'unknown';
  }
}

@SubCommand({
  name: 'list',
  description:
    'orders whose Payflow call is in doubt: what was sent, whether and when the request left, ' +
    'the error, what the bridge knows and the webhooks Payflow sent for the payment',
})
export class InDoubtListCommand extends CliCommand {
  @Option({ flags: '--json', description: 'machine-readable output (docs/operations.md)' })
  parseJson(): boolean {
    return true;
  }

  async run(args: string[], options: { json?: boolean } = {}): Promise<void> {
    this.noExtraArguments(args);
    const database = await this.resources.database();
    const rows = await new InDoubtListQuery().list(database.sql);
    const now = new Date();
    const items = rows.map((row) => inDoubtItem(row, now));
    this.runtime.out(
      options.json === true
        ? JSON.stringify({ inDoubt: items }, null, 2)
        : renderInDoubtList(items),
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
    return usage(() => {
      const name = value.replace(/[\p{Cc}]/gu, ' ').trim();
      if (name.length === 0 || name.length > 64) throw new Error('--by: 1 to 64 characters');
      return name;
    });
  }

  async run(args: string[], options: ResolveOptions = {}): Promise<void> {
    const [orderId, ...rest] = args;
    this.noExtraArguments(rest);
    if (orderId === undefined) throw new UsageError('missing the order id');
    const verdict = this.verdict(options);
    const payflowConfig =
      verdict.kind === 'payment_found' ? loadCliPayflowConfig(this.config) : null;
    const database = await this.resources.database();
    const batcher = new TransactionBatcher(database.pool);
    const client =
      payflowConfig === null
        ? null
        : new PayflowClient(payflowClientOptionsFromConfig(payflowConfig), this.logger);
    try {
      const payments = new PaymentRepository();
      const attempts = new CommandAttemptRepository(
        new OrderRepository(),
        new ProcessedEventRepository(),
        batcher,
      );
      const resolver = new PaymentCreationResolver(
        batcher,
        payments,
        new InstallmentRepository(),
        attempts,
        OutboxWriter.forTopics(outboundTopicsFromConfig(this.config)),
      );
      const service = new InDoubtService({
        database,
        reads: new InDoubtListQuery(),
        verdicts: new InDoubtVerdictRepository(),
        attempts,
        payments,
        resolver,
        payflow: client,
        replayer: this.replayer(),
      });
      const outcome = await service.resolve({
        orderId,
        verdict,
        decidedBy: operatorName(options.by),
      });
      this.runtime.out(outcome.lines.join('\n'));
    } finally {
      await batcher.close();
      await client?.close();
    }
  }

  private verdict(options: ResolveOptions): Verdict {
    if (options.payment !== undefined && options.notCreated === true) {
      throw new UsageError('give either --payment PAYFLOW_ID or --not-created, not both');
    }
    if (options.payment !== undefined) return { kind: 'payment_found', payflowId: options.payment };
    if (options.notCreated === true) return { kind: 'not_created' };
    throw new UsageError('give --payment PAYFLOW_ID or --not-created');
  }

  /** `dlq replay --order`, then the order's bucket published (its payment.created too). */
  private replayer(): OrderReplayer {
    return {
      replayOrder: async (orderId) => {
        const database = await this.resources.database();
        const relay = await this.resources.outboxRelay();
        const service = new DeadLetterReplayService(
          database,
          new DeadLetterRepository(),
          new OutboxRepository(),
          relay,
          { topic: this.config.TOPIC_ORDERS, flushTimeoutMs: FLUSH_TIMEOUT_MS },
        );
        const result = await service.replay({ orderId });
        const flushed = await relay.flush(FLUSH_TIMEOUT_MS, { buckets: [outboxBucket(orderId)] });
        if (!flushed.drained) {
          throw new Error(
            `the verdict is recorded but ${flushed.remaining} event(s) of order ${orderId} were not ` +
              "published in time (is Kafka reachable?); the worker's outbox relay publishes them",
          );
        }
        return { messages: result.messages, byReason: result.byReason };
      },
    };
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
