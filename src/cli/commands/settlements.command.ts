/**
 * `settlements pull --from --to [--org] [--format]`: pulls the nights of a date range by
 * hand, oldest first, per organization (every organization the credentials reach, or
 * `--org`), with a progress bar; then publishes what it wrote through the outbox. Each
 * night is pulled under its own advisory lock, so it is safe beside the nightly run: a
 * night both pull stores one file. A night pulled again stores nothing unless Payflow's
 * file changed (then both versions are kept, and the output says so).
 *
 * `--recheck N` instead of --from/--to asks again for the last N nights (up to
 * yesterday), so that a file Payflow changed after it was pulled is found.
 *
 * `settlements status [--from] [--to] [--org] [--missing]`: the tracked nights, with the
 * attempts and last error of those still missing.
 *
 * `settlements forget --night D [--org] [--format]`: gives up a `missing` night that cannot
 * be pulled (Payflow will never have it), so that runs stop asking for it and it stops
 * counting as missing. Idempotent; it says what it did to each tracked night of that date.
 */
import { Command, Option, SubCommand } from 'nest-commander';
import { describeError } from '../../errors/app-error.js';
import { Database } from '../../database/database.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import { SETTLEMENT_FORMATS, type SettlementFormat } from '../../payflow/wire/payflow.schemas.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';
import { addDays, dateIn, datesBetween, isIsoDate } from '../../timing/calendar.js';
import { previousNight } from '../../settlements/nights.js';
import { PullSettlementHandler } from '../../settlements/pull/pull-settlement.handler.js';
import { OutboxCommittedModule } from '../../outbox/outbox-committed.js';
import { SettlementPullModule } from '../../settlements/pull/settlement-pull.module.js';
import { SettlementNightsModule } from '../../settlements/settlement-nights.module.js';
import { SettlementPullError } from '../../settlements/settlement.errors.js';
import { SettlementRepository } from '../../settlements/settlement.repository.js';
import { UsageError } from '../cli.runtime.js';
import {
  SettlementsAcknowledgeCommand,
  SettlementsReconcileCommand,
} from './settlements-reconcile.command.js';
import { CliCommand, usage } from './cli-command.js';
import { createSettlementProgress } from './settlement-progress.js';
import {
  describeForgotten,
  describeNights,
  describePulls,
  type NightPulled,
} from './settlements.view.js';

/** Longest range one command pulls (a year and a day). */
export const MAX_PULL_DAYS = 366;

function parseDate(flag: string, value: string): string {
  if (!isIsoDate(value)) throw new Error(`${flag} must be a date written YYYY-MM-DD`);
  return value;
}

function parseOrganization(value: string): string {
  const id = value.trim();
  if (id === '' || id.length > 200 || /\s/.test(id)) {
    throw new Error('--org must be an organization id (no spaces)');
  }
  return id;
}

function parseFormat(value: string): SettlementFormat {
  const format = SETTLEMENT_FORMATS.find((known) => known === value);
  if (format === undefined)
    throw new Error(`--format must be one of ${SETTLEMENT_FORMATS.join(', ')}`);
  return format;
}

function parseRecheck(value: string): number {
  const nights = Number(value);
  if (!/^\d+$/.test(value) || nights < 1 || nights > MAX_PULL_DAYS) {
    throw new Error(`--recheck must be a number of nights from 1 to ${MAX_PULL_DAYS}`);
  }
  return nights;
}

interface PullOptions {
  readonly from?: string;
  readonly to?: string;
  readonly recheck?: number;
  readonly org?: string;
  readonly format?: SettlementFormat;
}

@SubCommand({
  name: 'pull',
  description:
    'pull the settlement files of a date range now (every organization, or --org), store ' +
    'each new or changed file and publish it; a night already stored unchanged stores nothing',
})
export class SettlementsPullCommand extends CliCommand {
  @Option({ flags: '--from <date>', description: 'first night, YYYY-MM-DD (required)' })
  parseFrom(value: string): string {
    return usage(() => parseDate('--from', value));
  }

  @Option({ flags: '--to <date>', description: 'last night, YYYY-MM-DD (required)' })
  parseTo(value: string): string {
    return usage(() => parseDate('--to', value));
  }

  @Option({
    flags: '--recheck <nights>',
    description: 'instead of --from/--to: the last N nights up to yesterday, asked for again',
  })
  parseRecheck(value: string): number {
    return usage(() => parseRecheck(value));
  }

  @Option({ flags: '--org <id>', description: 'only this organization' })
  parseOrg(value: string): string {
    return usage(() => parseOrganization(value));
  }

  @Option({
    flags: '--format <format>',
    description: `file format: ${SETTLEMENT_FORMATS.join(', ')} (default standard)`,
  })
  parseFormat(value: string): SettlementFormat {
    return usage(() => parseFormat(value));
  }

  async run(args: string[], options: PullOptions = {}): Promise<void> {
    this.noExtraArguments(args);
    // Today's file is not complete, and a stored night is not pulled again by the nightly
    // run: the newest night a pull may take is yesterday, as the nightly run sees it.
    const lastNight = previousNight(new Date(), this.config.SETTLEMENT_TIMEZONE);
    let { from, to } = options;
    if (options.recheck !== undefined) {
      if (from !== undefined || to !== undefined) {
        throw new UsageError('--recheck takes the place of --from and --to: give one or the other');
      }
      from = addDays(lastNight, -(options.recheck - 1));
      to = lastNight;
    }
    if (from === undefined || to === undefined) {
      throw new UsageError('settlements pull needs --from and --to (or --recheck N)');
    }
    if (from > to) throw new UsageError('--from must not be after --to');
    if (to > lastNight) {
      throw new UsageError(
        `--to ${to} is not over yet: the newest complete night is ${lastNight} ` +
          `(SETTLEMENT_TIMEZONE ${this.config.SETTLEMENT_TIMEZONE})`,
      );
    }
    if (addDays(from, MAX_PULL_DAYS - 1) < to) {
      throw new UsageError(`a pull covers at most ${MAX_PULL_DAYS} days; split the range`);
    }
    const format = options.format ?? 'standard';
    const context = await this.features.open(
      [SettlementPullModule.forRoot({ outbox: OutboxCommittedModule.withoutRelay() })],
      { payflow: true },
    );
    const handler = context.get(PullSettlementHandler);
    const payflow = context.get<PayflowApi>(PAYFLOW_API);
    const topic = this.config.TOPIC_SETTLEMENTS;
    const organizations =
      options.org !== undefined
        ? [options.org]
        : (await payflow.listOrganizations()).map((organization) => organization.id);
    const dates = datesBetween(from, to);
    const progress = createSettlementProgress(this.runtime.io);
    const nights: NightPulled[] = [];
    progress.start(organizations.length * dates.length);
    try {
      for (const organizationId of organizations) {
        for (const date of dates) {
          const label = `${organizationId} ${date}`;
          const night = { organizationId, date, format };
          try {
            const result = await handler.execute(
              { ...night, trigger: 'cli' },
              progress.night(label),
            );
            nights.push({ ...night, result });
            progress.done(label, result.outcome);
          } catch (error) {
            nights.push({
              ...night,
              error: error instanceof SettlementPullError ? error.reason : describeError(error),
            });
            progress.done(label, 'FAILED');
          }
        }
      }
    } finally {
      progress.stop();
    }
    this.runtime.out(describePulls(nights, topic));
    if (
      nights.some(
        (night) => night.result?.outcome === 'stored' || night.result?.outcome === 'changed',
      )
    ) {
      await this.publish();
    }
    const failed = nights.filter((night) => night.result === undefined).length;
    if (failed > 0) {
      throw new Error(
        `${failed} night(s) not pulled; they are marked missing and the nightly run tries them again`,
      );
    }
  }

  /** Publishes the outbox now (a running worker would too; relays never publish a row twice). */
  private async publish(): Promise<void> {
    try {
      const relay = await this.resources.outboxRelay();
      const flushed = await relay.flush(120_000);
      this.runtime.out(
        flushed.drained
          ? `Published ${flushed.published} event(s).`
          : `Published ${flushed.published} event(s); ${flushed.remaining} wait in the outbox for a worker.`,
      );
    } catch (error) {
      this.runtime.printError(
        `the files are stored, but their events could not be published now (${describeError(error)}); ` +
          'they wait in the outbox and a running worker publishes them',
      );
    }
  }
}

interface StatusOptions {
  readonly from?: string;
  readonly to?: string;
  readonly org?: string;
  readonly missing?: boolean;
}

@SubCommand({
  name: 'status',
  description: 'list the tracked nights (default: the last 31 days), with what is still missing',
})
export class SettlementsStatusCommand extends CliCommand {
  @Option({ flags: '--from <date>', description: 'first night, YYYY-MM-DD' })
  parseFrom(value: string): string {
    return usage(() => parseDate('--from', value));
  }

  @Option({ flags: '--to <date>', description: 'last night, YYYY-MM-DD' })
  parseTo(value: string): string {
    return usage(() => parseDate('--to', value));
  }

  @Option({ flags: '--org <id>', description: 'only this organization' })
  parseOrg(value: string): string {
    return usage(() => parseOrganization(value));
  }

  @Option({ flags: '--missing', description: 'only nights still missing' })
  parseMissing(): boolean {
    return true;
  }

  async run(args: string[], options: StatusOptions = {}): Promise<void> {
    this.noExtraArguments(args);
    const today = dateIn(new Date(), this.config.SETTLEMENT_TIMEZONE);
    const to = options.to ?? today;
    const from = options.from ?? addDays(to, -30);
    if (from > to) throw new UsageError('--from must not be after --to');
    const context = await this.features.open([SettlementNightsModule]);
    const nights = await context.get(SettlementRepository).nights(context.get(Database).sql, {
      from,
      to,
      organizationId: options.org ?? null,
      ...(options.missing === true ? { status: 'missing' as const } : {}),
    });
    this.runtime.out(describeNights(nights));
  }
}

interface ForgetOptions {
  readonly night?: string;
  readonly org?: string;
  readonly format?: SettlementFormat;
}

@SubCommand({
  name: 'forget',
  description:
    'give up a missing night that cannot be pulled (--night, every organization or --org): ' +
    'no run asks for it again; a pull by hand still can',
})
export class SettlementsForgetCommand extends CliCommand {
  @Option({ flags: '--night <date>', description: 'the night, YYYY-MM-DD (required)' })
  parseNight(value: string): string {
    return usage(() => parseDate('--night', value));
  }

  @Option({ flags: '--org <id>', description: 'only this organization' })
  parseOrg(value: string): string {
    return usage(() => parseOrganization(value));
  }

  @Option({ flags: '--format <format>', description: 'only this format' })
  parseFormat(value: string): SettlementFormat {
    return usage(() => parseFormat(value));
  }

  async run(args: string[], options: ForgetOptions = {}): Promise<void> {
    this.noExtraArguments(args);
    if (options.night === undefined) throw new UsageError('settlements forget needs --night');
    const context = await this.features.open([SettlementNightsModule]);
    const nights = await context
      .get(SettlementRepository)
      .forgetNights(
        context.get(Database).sql,
        options.night,
        options.org ?? null,
        options.format ?? null,
      );
    this.runtime.out(describeForgotten(options.night, options.org ?? null, nights));
  }
}

@Command({
  name: 'settlements',
  description: 'nightly settlement files',
  subCommands: [
    SettlementsPullCommand,
    SettlementsStatusCommand,
    SettlementsForgetCommand,
    SettlementsReconcileCommand,
    SettlementsAcknowledgeCommand,
  ],
})
export class SettlementsCommand extends CliCommand {
  run(args: string[]): Promise<void> {
    this.requireSubcommand(args);
  }
}
