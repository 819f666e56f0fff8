/**
 * `GET /console/settlements[?org=&from=&to=]`: the tracked settlement nights by
 * organization, each pulled, changed (Payflow's file changed after a first pull), missing
 * or forgotten, by the rule and the default range of `settlements status` (the last 31
 * days up to today in SETTLEMENT_TIMEZONE).
 *
 * `POST /console/settlements/pull` (form: `org`, `date`, `format`): "pull again", one night
 * by the handler `settlements pull` runs (a pull by hand: it always asks Payflow, stores a
 * file only when its content is new, and publishes it through the outbox); only nights
 * that are over, as the CLI allows. `POST /console/settlements/forget` (same form): gives
 * up a missing night as `settlements forget` does. Both are recorded.
 */
import { Controller, Get, Inject, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { describeError } from '../../../common/app-error.js';
import { isIsoDate } from '../../../common/calendar.js';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { Database } from '../../../database/database.js';
import {
  SettlementNightsQuery,
  defaultNightRange,
  type OrganizationNights,
} from '../../../operator/settlements/settlement-nights.query.js';
import { SETTLEMENT_FORMATS, type SettlementFormat } from '../../../payflow/payflow.schemas.js';
import { previousNight } from '../../../settlements/nights.js';
import { PullSettlementHandler } from '../../../settlements/pull/pull-settlement.handler.js';
import { SettlementRepository } from '../../../settlements/settlement.repository.js';
import { ConsolePage, HtmlPage } from '../../shared/console-page.decorator.js';
import { ConsolePageKit } from '../../shared/console-page-kit.js';
import { formField, queryParam } from '../../shared/console-request.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';
import { RELAY_WAKEUP } from '../console-operations.tokens.js';

export interface SettlementNotice {
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly lines: readonly string[];
}

export interface SettlementsModel {
  readonly form: Readonly<Record<'org' | 'from' | 'to', string>>;
  readonly range: { readonly from: string; readonly to: string };
  readonly problems: readonly string[];
  readonly organizations: readonly OrganizationNights[];
  /** The newest night a pull may take (yesterday in SETTLEMENT_TIMEZONE). */
  readonly lastNight: string;
  readonly notice: SettlementNotice | null;
}

interface NightForm {
  readonly organizationId: string;
  readonly date: string;
  readonly format: SettlementFormat;
}

const ORGANIZATION = /^\S{1,200}$/;

@Controller('console/settlements')
@ConsolePage()
export class SettlementsController {
  constructor(
    @Inject(SettlementNightsQuery) private readonly nights: SettlementNightsQuery,
    @Inject(PullSettlementHandler) private readonly pulls: PullSettlementHandler,
    @Inject(SettlementRepository) private readonly settlements: SettlementRepository,
    @Inject(Database) private readonly database: Database,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'SETTLEMENT_TIMEZONE'>,
    @Inject(RELAY_WAKEUP) private readonly wakeRelay: () => void,
    @Inject(ConsolePageKit) private readonly kit: ConsolePageKit,
  ) {}

  @Get()
  @HtmlPage()
  async list(@Req() request: FastifyRequest): Promise<string> {
    const field = (name: string): string => queryParam(request, name).trim();
    return this.render(request, { org: field('org'), from: field('from'), to: field('to') }, null);
  }

  @Post('pull')
  @HtmlPage()
  async pull(@Req() request: FastifyRequest): Promise<string> {
    return this.onNight(request, 'pull', (session, night) => this.pullNight(session, night));
  }

  @Post('forget')
  @HtmlPage()
  async forget(@Req() request: FastifyRequest): Promise<string> {
    return this.onNight(request, 'forget', (session, night) => this.forgetNight(session, night));
  }

  /** A form on one night: refused (and recorded) when unreadable, else `act`; the page again. */
  private async onNight(
    request: FastifyRequest,
    action: 'pull' | 'forget',
    act: (session: ConsoleSession, night: NightForm) => Promise<SettlementNotice>,
  ): Promise<string> {
    const session = this.kit.session(request);
    const night = this.nightOf(request);
    const notice =
      typeof night === 'string'
        ? await this.refuse(session, action, null, night)
        : await act(session, night);
    return this.render(request, { org: '', from: '', to: '' }, notice);
  }

  private async pullNight(session: ConsoleSession, night: NightForm): Promise<SettlementNotice> {
    const lastNight = previousNight(new Date(), this.config.SETTLEMENT_TIMEZONE);
    if (night.date > lastNight) {
      return this.refuse(
        session,
        'pull',
        night,
        `${night.date} is not over yet: the newest complete night is ${lastNight}. Nothing was pulled.`,
      );
    }
    const label = `${night.organizationId} ${night.date} ${night.format}`;
    try {
      const result = await this.pulls.execute({ ...night, trigger: 'cli' });
      if (result.outcome === 'stored' || result.outcome === 'changed') this.wakeRelay();
      const file = result.file;
      const what =
        result.outcome === 'unchanged'
          ? 'Payflow’s file is the same as the one stored: nothing stored, nothing published.'
          : result.outcome === 'changed'
            ? `Payflow’s file changed: stored as version ${file?.version ?? '?'} (${file?.rows ?? 0} rows, ${file?.badRows ?? 0} unreadable), and published.`
            : result.outcome === 'stored'
              ? `Stored (${file?.rows ?? 0} rows, ${file?.badRows ?? 0} unreadable) and published.`
              : 'Another pull took it meanwhile.';
      await this.kit.record(session, 'pull', null, 'done', {
        organizationId: night.organizationId,
        night: night.date,
        format: night.format,
        result: result.outcome,
      });
      return { outcome: 'done', lines: [`Pulled ${label}: ${result.outcome}.`, what] };
    } catch (error) {
      const reason = describeError(error);
      await this.kit.record(session, 'pull', null, 'failed', {
        organizationId: night.organizationId,
        night: night.date,
        format: night.format,
        error: reason,
      });
      return {
        outcome: 'failed',
        lines: [
          `Could not pull ${label}: ${reason}`,
          'The night is marked missing; the nightly run tries it again.',
        ],
      };
    }
  }

  private async forgetNight(session: ConsoleSession, night: NightForm): Promise<SettlementNotice> {
    const results = await this.settlements.forgetNights(
      this.database.sql,
      night.date,
      night.organizationId,
      night.format,
    );
    const changed = results.filter((entry) => entry.forgotten).length;
    const lines =
      results.length === 0
        ? [`No night of ${night.organizationId} is tracked for ${night.date}: nothing to forget.`]
        : results.map(({ night: row, forgotten }) =>
            forgotten
              ? `${row.organizationId} ${row.date} ${row.format}: forgotten (was missing after ${row.attempts} attempt(s)); no run asks Payflow for it again.`
              : `${row.organizationId} ${row.date} ${row.format}: left as it is (${row.status}, not missing).`,
          );
    await this.kit.record(session, 'forget', null, changed > 0 ? 'done' : 'refused', {
      organizationId: night.organizationId,
      night: night.date,
      format: night.format,
      forgotten: changed,
    });
    return { outcome: changed > 0 ? 'done' : 'refused', lines };
  }

  private async refuse(
    session: ConsoleSession,
    action: 'pull' | 'forget',
    night: NightForm | null,
    why: string,
  ): Promise<SettlementNotice> {
    await this.kit.record(session, action, null, 'refused', {
      organizationId: night?.organizationId ?? null,
      night: night?.date ?? null,
      why,
    });
    return { outcome: 'refused', lines: [why] };
  }

  /** The night a form names, or why it cannot be read. */
  private nightOf(request: FastifyRequest): NightForm | string {
    const organizationId = formField(request.body, 'org').trim();
    const date = formField(request.body, 'date').trim();
    const formatText = formField(request.body, 'format').trim() || 'standard';
    if (!ORGANIZATION.test(organizationId)) return 'Name the organization. Nothing changed.';
    if (!isIsoDate(date)) return 'The night is a date written YYYY-MM-DD. Nothing changed.';
    const format = SETTLEMENT_FORMATS.find((known) => known === formatText);
    if (format === undefined) {
      return `The format is one of ${SETTLEMENT_FORMATS.join(', ')}. Nothing changed.`;
    }
    return { organizationId, date, format };
  }

  private async render(
    request: FastifyRequest,
    form: Readonly<Record<'org' | 'from' | 'to', string>>,
    notice: SettlementNotice | null,
  ): Promise<string> {
    const session = this.kit.session(request);
    const now = new Date();
    const fallback = defaultNightRange(now, this.config.SETTLEMENT_TIMEZONE);
    const problems: string[] = [];
    const dateOr = (name: 'from' | 'to', value: string, otherwise: string): string => {
      if (value === '') return otherwise;
      if (isIsoDate(value)) return value;
      problems.push(name);
      return otherwise;
    };
    const to = dateOr('to', form.to, fallback.to);
    const from = dateOr('from', form.from, form.to === '' ? fallback.from : to);
    if (form.org !== '' && !ORGANIZATION.test(form.org)) problems.push('org');
    const range = from <= to ? { from, to } : { from: to, to: from };
    const organizations = await this.nights.byOrganization({
      ...range,
      organizationId: form.org === '' || problems.includes('org') ? null : form.org,
    });
    return this.kit.render<SettlementsModel>(
      'operations/settlements/settlements',
      { title: 'Settlement nights', section: 'settlements', session },
      {
        form,
        range,
        problems,
        organizations,
        lastNight: previousNight(now, this.config.SETTLEMENT_TIMEZONE),
        notice,
      },
    );
  }
}
