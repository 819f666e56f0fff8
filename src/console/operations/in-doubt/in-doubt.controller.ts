/**
 * `GET /console/in-doubt[?orderId=]`: every Payflow call in doubt (the read of `in-doubt
 * list`): what was sent and when, whether the request left, what Payflow sent since, and
 * the two verdicts of `in-doubt resolve`.
 *
 * `POST /console/in-doubt/{orderId}/resolve` (form: `paymentId`, or `notCreated`): the
 * verdict (ConsoleVerdicts: the same InDoubtService and its checks against Payflow: the
 * payment exists, in the same organization, with the same total and currency, and belongs
 * to no other payment). A refused verdict is shown with why, and nothing changes. Every
 * verdict, given or refused, is recorded (the decider is the signed-in operator).
 */
import { Controller, Get, Inject, Param, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Database } from '../../../database/database.js';
import { InDoubtListQuery } from '../../../operator/in-doubt/in-doubt-list.query.js';
import {
  describeAge,
  describeLeft,
  describeProbe,
  describeSent,
  describeWaiting,
  describeWebhooks,
  inDoubtItem,
  type InDoubtItem,
} from '../../../operator/in-doubt/in-doubt-list.view.js';
import { ConsolePage, HtmlPage } from '../../page/console-page.decorator.js';
import { ConsolePageServices } from '../../page/console-page-services.js';
import { formField, queryParam } from '../../access/console-request.js';
import { ConsoleVerdicts, type VerdictNotice } from './console-verdicts.js';

/** An item with the lines `in-doubt list` prints for it. */
export interface InDoubtEntry {
  readonly item: InDoubtItem;
  readonly sent: string;
  readonly left: string;
  readonly webhooks: string;
  readonly probe: string;
  readonly waiting: string | null;
}

export interface InDoubtModel {
  readonly entries: readonly InDoubtEntry[];
  /** Calls held for a late effect: read only, no verdict (they decide themselves). */
  readonly waiting: readonly {
    readonly item: InDoubtItem;
    readonly sent: string;
    readonly left: string;
    readonly until: string;
    readonly probe: string;
  }[];
  readonly orderId: string;
  readonly notice: VerdictNotice | null;
}

function entryOf(item: InDoubtItem): InDoubtEntry {
  return {
    item,
    sent: describeSent(item),
    left: describeLeft(item),
    webhooks: describeWebhooks(item),
    probe: describeProbe(item),
    waiting: item.inDoubtSince === null ? null : describeAge(secondsSince(item.inDoubtSince)),
  };
}

function secondsSince(iso: string): number {
  return Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 1000));
}

@Controller('console/in-doubt')
@ConsolePage()
export class InDoubtController {
  constructor(
    @Inject(InDoubtListQuery) private readonly calls: InDoubtListQuery,
    @Inject(ConsoleVerdicts) private readonly verdicts: ConsoleVerdicts,
    @Inject(Database) private readonly database: Database,
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
  ) {}

  @Get()
  @HtmlPage()
  async list(@Req() request: FastifyRequest): Promise<string> {
    return this.render(request, queryParam(request, 'orderId').trim(), null);
  }

  @Post(':orderId/resolve')
  @HtmlPage()
  async resolve(
    @Req() request: FastifyRequest,
    @Param('orderId') orderId: string,
  ): Promise<string> {
    const session = this.pages.session(request);
    const notice = await this.verdicts.resolve(session, orderId, {
      paymentId: formField(request.body, 'paymentId'),
      notCreated: formField(request.body, 'notCreated'),
    });
    return this.render(request, '', notice);
  }

  private async render(
    request: FastifyRequest,
    orderId: string,
    notice: VerdictNotice | null,
  ): Promise<string> {
    const session = this.pages.session(request);
    const rows =
      orderId === ''
        ? await this.calls.list(this.database.sql)
        : await this.calls.ofOrder(this.database.sql, orderId);
    const held = (await this.calls.held(this.database.sql)).filter(
      (row) => orderId === '' || row.orderId === orderId,
    );
    const now = new Date();
    const waiting = held.map((row) => {
      const item = inDoubtItem(row, now);
      return {
        item,
        sent: describeSent(item),
        left: describeLeft(item),
        until: describeWaiting(item) ?? '',
        probe: describeProbe(item),
      };
    });
    return this.pages.render<InDoubtModel>(
      'operations/in-doubt/in-doubt',
      { title: 'In doubt', section: 'in-doubt', session },
      { entries: rows.map((row) => entryOf(inDoubtItem(row, now))), waiting, orderId, notice },
    );
  }
}
