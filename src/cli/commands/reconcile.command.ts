import { Command } from 'nest-commander';
import { OutboxWriter, outboundTopicsFromConfig } from '../../outbox/outbox-writer.js';
import { OutboxRepository } from '../../outbox/outbox.repository.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import { payflowClientOptionsFromConfig } from '../../payflow/payflow.module.js';
import { PaymentStatusSync } from '../../payments/status-sync/payment-status-sync.js';
import {
  ReconciliationPoller,
  type PassResult,
} from '../../reconciliation/reconciliation.poller.js';
import { loadCliPayflowConfig } from '../cli.config.js';
import { CliCommand } from './cli-command.js';

/** What a pass changed, one line per payment, then a summary. */
export function renderPass(result: PassResult): string {
  const lines = result.changed.map((change) => {
    const installments =
      change.installmentChanges > 0 ? `, ${change.installmentChanges} installment(s)` : '';
    return (
      `order ${change.orderId}  payment ${change.payflowId}  ` +
      `${change.previousProviderStatus ?? '(none)'} -> ${change.providerStatus} (${change.status})` +
      installments
    );
  });
  for (const failure of result.failed) {
    lines.push(`order ${failure.orderId}  payment ${failure.payflowId}  FAILED ${failure.error}`);
  }
  lines.push(
    `Reconciled ${result.checked} open payment(s) in ${result.durationMs} ms: ` +
      `${result.changed.length} changed, ${result.unchanged + result.stale} unchanged, ` +
      `${result.failed.length} failed, ${result.events} event(s) written to the outbox.`,
  );
  return lines.join('\n');
}

@Command({
  name: 'reconcile',
  description: 'poll Payflow for every open payment and emit what changed',
})
export class ReconcileCommand extends CliCommand {
  async run(args: string[]): Promise<void> {
    this.noExtraArguments(args);
    const payflowConfig = loadCliPayflowConfig(this.config);
    const database = await this.resources.database();
    const client = new PayflowClient(payflowClientOptionsFromConfig(payflowConfig), this.logger);
    try {
      const sync = new PaymentStatusSync(
        database,
        new OutboxWriter(
          new OutboxRepository({ notifyInTransaction: true }),
          outboundTopicsFromConfig(this.config),
        ),
        client,
      );
      const poller = new ReconciliationPoller(database, sync, { autoStart: false }, this.logger);
      const result = await poller.runPass();
      if (!result.ran) {
        throw new Error('another reconciliation pass is running (worker or CLI); try again later');
      }
      this.runtime.out(renderPass(result));
      if (result.failed.length > 0) {
        throw new Error(`${result.failed.length} payment(s) could not be checked`);
      }
    } finally {
      await client.close();
    }
  }
}
