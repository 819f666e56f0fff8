/**
 * `settlements reconcile [--org ID] [--from D --to D] [--csv FILE]` (CONTRACT §10): the
 * current settlement lines of the range (every night when no range) matched to the
 * payments, installments and refunds the bridge knows; findings opened and closed, each new
 * one published once as `settlement.exception`, and the totals of every night touched
 * published as `settlement.reconciled` when they changed. Idempotent: a second run
 * publishes nothing new. `--csv` also writes finance's spreadsheet (reconcile-csv.ts).
 *
 * `settlements acknowledge FINDING_ID --reason TEXT [--by NAME]`: a person closes a
 * finding (who, when, why, in the finding and in the operator audit). Idempotent.
 */
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { Option, SubCommand } from 'nest-commander';
import { Database } from '../../database/database.js';
import { describeError } from '../../errors/app-error.js';
import { OperatorActionRepository } from '../../operator/audit/operator-action.repository.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { writeReconcileCsv } from '../../settlements/reconcile/reconcile-csv.js';
import { SettlementFindingsRepository } from '../../settlements/reconcile/settlement-findings.repository.js';
import { SettlementLinesRepository } from '../../settlements/reconcile/settlement-lines.repository.js';
import { SettlementReconcileModule } from '../../settlements/reconcile/settlement-reconcile.module.js';
import { SettlementReconciler } from '../../settlements/reconcile/settlement-reconciler.js';
import { SettlementTotalsRepository } from '../../settlements/reconcile/settlement-totals.repository.js';
import { SettlementRepository } from '../../settlements/settlement.repository.js';
import { isIsoDate } from '../../timing/calendar.js';
import { UsageError } from '../cli.runtime.js';
import { CliCommand, operatorName, parseOperatorName, usage } from './cli-command.js';

interface ReconcileOptions {
  readonly org?: string;
  readonly from?: string;
  readonly to?: string;
  readonly csv?: string;
}

function parseDate(flag: string, value: string): string {
  if (!isIsoDate(value)) throw new Error(`${flag} must be a date written YYYY-MM-DD`);
  return value;
}

@SubCommand({
  name: 'reconcile',
  description:
    'match the settlement lines (every night, or --from/--to) to the payments, installments ' +
    'and refunds the bridge knows: findings published once as settlement.exception, totals ' +
    'as settlement.reconciled when they change; --csv FILE writes the spreadsheet. Idempotent',
})
export class SettlementsReconcileCommand extends CliCommand {
  @Option({ flags: '--org <id>', description: 'only this organization' })
  parseOrg(value: string): string {
    return usage(() => {
      const id = value.trim();
      if (id === '' || id.length > 200 || /\s/.test(id)) {
        throw new Error('--org must be an organization id (no spaces)');
      }
      return id;
    });
  }

  @Option({ flags: '--from <date>', description: 'first settlement date, YYYY-MM-DD' })
  parseFrom(value: string): string {
    return usage(() => parseDate('--from', value));
  }

  @Option({ flags: '--to <date>', description: 'last settlement date, YYYY-MM-DD' })
  parseTo(value: string): string {
    return usage(() => parseDate('--to', value));
  }

  @Option({ flags: '--csv <file>', description: "write finance's spreadsheet to this file" })
  parseCsv(value: string): string {
    return usage(() => {
      if (value.trim() === '') throw new Error('--csv needs a file name');
      return value;
    });
  }

  async run(args: string[], options: ReconcileOptions = {}): Promise<void> {
    this.noExtraArguments(args);
    if ((options.from === undefined) !== (options.to === undefined)) {
      throw new UsageError('give both --from and --to, or neither (every night)');
    }
    if (options.from !== undefined && options.to !== undefined && options.from > options.to) {
      throw new UsageError('--from must not be after --to');
    }
    const scope = {
      organizationId: options.org ?? null,
      from: options.from ?? null,
      to: options.to ?? null,
    };
    const context = await this.features.open([SettlementReconcileModule]);
    // The relay publishes what the reconciliation wrote: Kafka first, before anything changes.
    const relay = await this.resources.outboxRelay();
    const report = await context.get(SettlementReconciler).reconcile(scope);
    this.runtime.out(
      `Reconciled ${report.payments} payment(s) on ${report.lines} line(s) of ` +
        `${report.nights.length} night(s): ${report.opened} finding(s) opened, ` +
        `${report.closed} closed, ${report.totalsPublished} total(s) published.`,
    );
    if (options.csv !== undefined) {
      const out = createWriteStream(options.csv, { encoding: 'utf8' });
      const written = await writeReconcileCsv(
        context.get(Database).sql,
        {
          settlements: context.get(SettlementRepository),
          payments: context.get(PaymentRepository),
          lines: context.get(SettlementLinesRepository),
          findings: context.get(SettlementFindingsRepository),
          totals: context.get(SettlementTotalsRepository),
        },
        scope,
        out,
      );
      out.end();
      await finished(out);
      this.runtime.out(
        `Wrote ${written.lines} line row(s) and ${written.totals} totals row(s) to ${options.csv}.`,
      );
    }
    if (report.opened > 0 || report.totalsPublished > 0) {
      try {
        const flushed = await relay.flush(120_000);
        this.runtime.out(`Published ${flushed.published} event(s).`);
      } catch (error) {
        this.runtime.printError(
          `the events wait in the outbox for a worker (${describeError(error)})`,
        );
      }
    }
  }
}

interface AcknowledgeOptions {
  readonly reason?: string;
  readonly by?: string;
}

@SubCommand({
  name: 'acknowledge',
  arguments: '<findingId>',
  description:
    'close a settlement finding by hand (who, when, why, audited); it is not opened again ' +
    'while its amounts stay the same. Idempotent',
  argsDescription: { findingId: 'the finding id (settlement.exception data.findingId)' },
})
export class SettlementsAcknowledgeCommand extends CliCommand {
  @Option({ flags: '--reason <text>', description: 'why, one line (no personal data)' })
  parseReason(value: string): string {
    return usage(() => {
      const reason = value.replace(/[\p{Cc}]/gu, ' ').trim();
      if (reason.length === 0 || reason.length > 500)
        throw new Error('--reason: 1 to 500 characters');
      return reason;
    });
  }

  @Option({ flags: '--by <name>', description: 'who, for the record (default: the OS user)' })
  parseBy(value: string): string {
    return parseOperatorName(value);
  }

  async run(args: string[], options: AcknowledgeOptions = {}): Promise<void> {
    const [given, ...rest] = args;
    this.noExtraArguments(rest);
    if (given === undefined || !/^\d{1,18}$/.test(given)) {
      throw new UsageError('give the finding id (a number)');
    }
    if (options.reason === undefined) throw new UsageError('give --reason TEXT');
    const by = operatorName(options.by);
    const context = await this.features.open([SettlementReconcileModule]);
    const outcome = await context.get(SettlementReconciler).acknowledge(given, options.reason, by);
    if (outcome === null) throw new Error(`no settlement finding ${given}`);
    const { finding } = outcome;
    if (outcome.changed) {
      await new OperatorActionRepository().record(context.get(Database).sql, {
        actor: by,
        actorSubject: null,
        actorVerified: false,
        clientAddress: null,
        action: 'acknowledge_finding',
        orderId: finding.orderId,
        details: {
          findingId: finding.id,
          kind: finding.kind,
          paymentId: finding.payflowPaymentId,
          reason: options.reason,
          via: 'cli',
        },
        outcome: 'done',
      });
    }
    this.runtime.out(
      outcome.changed
        ? `Finding ${finding.id} (${finding.kind}, ${finding.subjectKey}) acknowledged by ${by}.`
        : `Finding ${finding.id} was already closed (${finding.closedHow ?? 'closed'}${
            finding.closedBy === null ? '' : ` by ${finding.closedBy}`
          }); nothing changed.`,
    );
  }
}
