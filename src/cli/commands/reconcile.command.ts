import { Command } from 'nest-commander';
import { OutboxCommittedModule } from '../../outbox/outbox-committed.js';
import { ReconciliationModule } from '../../reconciliation/reconciliation.module.js';
import {
  ReconciliationPoller,
  type PassResult,
} from '../../reconciliation/reconciliation.poller.js';
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
    // The worker's poller, never started: the CLI runs one pass.
    const context = await this.features.open(
      [
        ReconciliationModule.forRoot({
          outbox: OutboxCommittedModule.withoutRelay(),
          options: { autoStart: false },
        }),
      ],
      { payflow: true },
    );
    const result = await context.get(ReconciliationPoller).runPass();
    if (!result.ran) {
      throw new Error('another reconciliation pass is running (worker or CLI); try again later');
    }
    this.runtime.out(renderPass(result));
    if (result.failed.length > 0) {
      throw new Error(`${result.failed.length} payment(s) could not be checked`);
    }
  }
}
