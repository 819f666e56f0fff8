/**
 * `GET /console/settlements[?org=&from=&to=]`: the tracked settlement nights by
 * organization, each pulled, changed (Payflow's file changed after a first pull), missing
 * or forgotten, by the rule and the default range of `settlements status` (the last 31
 * days up to today in SETTLEMENT_TIMEZONE).
 *
 * `POST /console/settlements/pull` (form: `org`, `date`, `format`): "pull again", one night,
 * as `settlements pull` does; `POST /console/settlements/forget` (same form): gives up a
 * missing night as `settlements forget` does (ConsoleNightActions). Both are recorded.
 */
import { Controller, Get, Inject, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { isIsoDate } from '../../../timing/calendar.js';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import {
  SettlementNightsQuery,
  defaultNightRange,
  type OrganizationNights,
} from '../../../operator/settlements/settlement-nights.query.js';
import { SETTLEMENT_FORMATS } from '../../../payflow/wire/payflow.schemas.js';
import { previousNight } from '../../../settlements/nights.js';
import { ConsolePage, HtmlPage } from '../../page/console-page.decorator.js';
import { ConsolePageServices } from '../../page/console-page-services.js';
import { formField, queryParam } from '../../access/console-request.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';
import {
  ConsoleNightActions,
  type NightForm,
  type SettlementNotice,
} from './console-night-actions.js';

export interface SettlementsModel {
  readonly form: Readonly<Record<'org' | 'from' | 'to', string>>;
  readonly range: { readonly from: string; readonly to: string };
  readonly problems: readonly string[];
  readonly organizations: readonly OrganizationNights[];
  /** The newest night a pull may take (yesterday in SETTLEMENT_TIMEZONE). */
  readonly lastNight: string;
  readonly notice: SettlementNotice | null;
}

const ORGANIZATION = /^\S{1,200}$/;

@Controller('console/settlements')
@ConsolePage()
export class SettlementsController {
  constructor(
    @Inject(SettlementNightsQuery) private readonly nights: SettlementNightsQuery,
    @Inject(ConsoleNightActions) private readonly actions: ConsoleNightActions,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'SETTLEMENT_TIMEZONE'>,
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
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
    return this.onNight(request, 'pull', (session, night) => this.actions.pull(session, night));
  }

  @Post('forget')
  @HtmlPage()
  async forget(@Req() request: FastifyRequest): Promise<string> {
    return this.onNight(request, 'forget', (session, night) => this.actions.forget(session, night));
  }

  /** A form on one night: refused (and recorded) when unreadable, else `act`; the page again. */
  private async onNight(
    request: FastifyRequest,
    action: 'pull' | 'forget',
    act: (session: ConsoleSession, night: NightForm) => Promise<SettlementNotice>,
  ): Promise<string> {
    const session = this.pages.session(request);
    const night = this.nightOf(request);
    const notice =
      typeof night === 'string'
        ? await this.actions.refuse(session, action, night)
        : await act(session, night);
    return this.render(request, { org: '', from: '', to: '' }, notice);
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
    const session = this.pages.session(request);
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
    return this.pages.render<SettlementsModel>(
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
