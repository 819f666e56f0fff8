import { Command, Option, SubCommand } from 'nest-commander';
import { Database } from '../../database/database.js';
import { OperatorReadsModule } from '../../operator/operator-reads.module.js';
import { OrderShowQuery } from '../../operator/order-show/order-show.query.js';
import { renderOrderView } from '../../operator/order-show/order-show.view.js';
import { CliCommand } from './cli-command.js';

/** `order show ID` failed because there is no such order. */
export class OrderNotFoundError extends Error {
  constructor(orderId: string) {
    super(`order "${orderId}" not found (no order and no dead letter has this id)`);
    this.name = 'OrderNotFoundError';
  }
}

@SubCommand({
  name: 'show',
  arguments: '<id>',
  description:
    "an order's state, payments, installments, documents, refunds, status history and dead letters",
  argsDescription: { id: 'the ERP order id (the Kafka key of its events)' },
})
export class OrderShowCommand extends CliCommand {
  @Option({ flags: '--json', description: 'machine-readable output' })
  parseJson(): boolean {
    return true;
  }

  async run(args: string[], options: { json?: boolean } = {}): Promise<void> {
    const [orderId, ...rest] = args;
    this.noExtraArguments(rest);
    if (orderId === undefined) return this.requireSubcommand([]);
    const context = await this.features.open([OperatorReadsModule]);
    const view = await context.get(OrderShowQuery).show(context.get(Database).sql, orderId);
    if (view === null) throw new OrderNotFoundError(orderId);
    this.runtime.out(options.json === true ? JSON.stringify(view, null, 2) : renderOrderView(view));
  }
}

@Command({ name: 'order', description: 'orders', subCommands: [OrderShowCommand] })
export class OrderCommand extends CliCommand {
  run(args: string[]): Promise<void> {
    this.requireSubcommand(args);
  }
}
