/**
 * `GET /console/search?q=`: finds orders by order id, order number, Payflow payment id or
 * customer number (OrderSearchQuery, the same read the CLI could use); without `q`, the
 * last orders that failed. One hit that matches exactly the order id goes straight to the
 * order's page.
 */
import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  MAX_TERM_LENGTH,
  OrderSearchQuery,
  type OrderSearchHit,
} from '../../operator/search/order-search.query.js';
import { CONSOLE_PREFIX } from '../console.options.js';
import { ConsolePage, HtmlPage } from '../page/console-page.decorator.js';
import { ConsolePageServices } from '../page/console-page-services.js';
import { queryParam, sessionOf } from '../access/console-request.js';

/** Hits shown on one page. */
export const SEARCH_LIMIT = 50;

export interface SearchModel {
  readonly q: string;
  readonly hits: readonly OrderSearchHit[];
  /** Whether the hits are the last failures (no term given). */
  readonly failures: boolean;
  readonly tooLong: boolean;
}

@Controller('console')
@ConsolePage()
export class SearchController {
  constructor(
    @Inject(OrderSearchQuery) private readonly search: OrderSearchQuery,
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
  ) {}

  @Get('search')
  @HtmlPage()
  async page(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string | undefined> {
    const q = queryParam(request, 'q').trim();
    const tooLong = q.length > MAX_TERM_LENGTH;
    const hits =
      q === ''
        ? await this.search.recentFailures(SEARCH_LIMIT)
        : tooLong
          ? []
          : await this.search.find(q, SEARCH_LIMIT);
    const [only] = hits;
    if (hits.length === 1 && only !== undefined && only.matchedBy.includes('order_id')) {
      void reply
        .code(303)
        .header('location', `${CONSOLE_PREFIX}/orders/${encodeURIComponent(only.orderId)}`);
      return undefined;
    }
    return this.pages.render<SearchModel>(
      'search/search',
      {
        title: q === '' ? 'Search' : `Search: ${q.slice(0, 60)}`,
        section: 'search',
        session: sessionOf(request) ?? null,
      },
      { q, hits, failures: q === '', tooLong },
    );
  }
}
