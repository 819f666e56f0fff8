/**
 * `GET /console/reconciliation[?org=&from=&to=&cursor=]`: the reconciliation of settlement
 * lines with the payments (CONTRACT §10): the totals of each night by organization and
 * currency (the settlement dates of the range; by default the last 31 days, as the
 * Settlements page), and the findings, open ones first, each linked to its order's page,
 * a page at a time (ReconciliationQuery).
 *
 * `POST /console/reconciliation/findings/{id}/acknowledge` (form: `reason`): closes an open
 * finding as `settlements acknowledge` does (ConsoleAcknowledgements: the same use case),
 * answered with the page and what it did or why it was refused. Recorded, done or refused.
 */
import { Controller, Get, HttpCode, Inject, Param, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import {
  ReconciliationQuery,
  parseFindingCursor,
  type ReconciliationPage,
} from '../../../operator/reconciliation/reconciliation.query.js';
import { defaultNightRange } from '../../../operator/settlements/settlement-nights.query.js';
import { isIsoDate } from '../../../timing/calendar.js';
import { formField, queryParam } from '../../access/console-request.js';
import { ConsolePage, HtmlPage } from '../../page/console-page.decorator.js';
import { ConsolePageServices } from '../../page/console-page-services.js';
import {
  ACKNOWLEDGE_REASON_MAX,
  ConsoleAcknowledgements,
  type AcknowledgeNotice,
} from './console-acknowledgements.js';

type FilterField = 'org' | 'from' | 'to';

export interface ReconciliationModel {
  readonly form: Readonly<Record<FilterField, string>>;
  readonly range: { readonly from: string; readonly to: string };
  readonly problems: readonly string[];
  readonly page: ReconciliationPage;
  /** The page's own query string without the cursor (for the next page's link). */
  readonly query: string;
  readonly reasonMax: number;
  /** What the acknowledgement just asked for did (null on a plain GET). */
  readonly notice: AcknowledgeNotice | null;
}

const ORGANIZATION = /^\S{1,200}$/;

@Controller('console/reconciliation')
@ConsolePage()
export class ReconciliationController {
  constructor(
    @Inject(ReconciliationQuery) private readonly reconciliation: ReconciliationQuery,
    @Inject(ConsoleAcknowledgements) private readonly acknowledgements: ConsoleAcknowledgements,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'SETTLEMENT_TIMEZONE'>,
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
  ) {}

  @Get()
  @HtmlPage()
  async list(@Req() request: FastifyRequest): Promise<string> {
    const field = (name: string): string => queryParam(request, name).trim();
    return this.render(
      request,
      { org: field('org'), from: field('from'), to: field('to') },
      field('cursor'),
      null,
    );
  }

  @Post('findings/:id/acknowledge')
  @HtmlPage()
  // The answer is the page with what the acknowledgement did: a page, not a created resource.
  @HttpCode(200)
  async acknowledge(@Req() request: FastifyRequest, @Param('id') id: string): Promise<string> {
    const session = this.pages.session(request);
    const notice = await this.acknowledgements.acknowledge(session, id, {
      reason: formField(request.body, 'reason'),
    });
    return this.render(request, { org: '', from: '', to: '' }, '', notice);
  }

  private async render(
    request: FastifyRequest,
    form: Readonly<Record<FilterField, string>>,
    cursor: string,
    notice: AcknowledgeNotice | null,
  ): Promise<string> {
    const session = this.pages.session(request);
    const fallback = defaultNightRange(new Date(), this.config.SETTLEMENT_TIMEZONE);
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
    if (cursor !== '' && parseFindingCursor(cursor) === null) problems.push('cursor');
    const range = from <= to ? { from, to } : { from: to, to: from };
    const page = await this.reconciliation.page(
      {
        ...range,
        organizationId: form.org === '' || problems.includes('org') ? null : form.org,
      },
      problems.includes('cursor') ? '' : cursor,
    );
    const query = new URLSearchParams(
      Object.entries(form).filter(([, value]) => value !== ''),
    ).toString();
    return this.pages.render<ReconciliationModel>(
      'operations/reconciliation/reconciliation',
      { title: 'Reconciliation', section: 'reconciliation', session },
      { form, range, problems, page, query, reasonMax: ACKNOWLEDGE_REASON_MAX, notice },
    );
  }
}
