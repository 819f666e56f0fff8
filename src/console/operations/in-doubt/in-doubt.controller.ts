/**
 * `GET /console/in-doubt[?orderId=]`: every Payflow call in doubt (the read of `in-doubt
 * list`): what was sent and when, whether the request left, what Payflow sent since, and
 * the two verdicts of `in-doubt resolve`.
 *
 * `POST /console/in-doubt/{orderId}/resolve` (form: `paymentId`, or `notCreated`): the
 * verdict, by the same InDoubtService and its checks against Payflow (the payment exists,
 * in the same organization, with the same total and currency, and belongs to no other
 * payment). A refused verdict is shown with why, and nothing changes. Every verdict, given
 * or refused, is recorded (the decider is the signed-in operator).
 */
import { Controller, Get, Inject, Param, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { describeError } from '../../../common/app-error.js';
import { Database } from '../../../database/database.js';
import { InDoubtListQuery } from '../../../operator/in-doubt/in-doubt-list.query.js';
import {
  describeAge,
  describeLeft,
  describeProbe,
  describeSent,
  describeWebhooks,
  inDoubtItem,
  type InDoubtItem,
} from '../../../operator/in-doubt/in-doubt-list.view.js';
import { InDoubtService, type Verdict } from '../../../orders/in-doubt/in-doubt.service.js';
import { ConsolePage, HtmlPage } from '../../shared/console-page.decorator.js';
import { ConsolePageKit } from '../../shared/console-page-kit.js';
import { formField, queryParam } from '../../shared/console-request.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';

/** An item with the lines `in-doubt list` prints for it. */
export interface InDoubtEntry {
  readonly item: InDoubtItem;
  readonly sent: string;
  readonly left: string;
  readonly webhooks: string;
  readonly probe: string;
  readonly waiting: string | null;
}

/** What the last verdict did, or why it was refused. */
export interface VerdictNotice {
  readonly orderId: string;
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly lines: readonly string[];
}

export interface InDoubtModel {
  readonly entries: readonly InDoubtEntry[];
  readonly orderId: string;
  readonly notice: VerdictNotice | null;
}

/** Where the CLI's words name its flags, the console's name its buttons. */
function consoleWords(line: string): string {
  return line
    .replace(/--payment\b/g, '“Payflow has it”')
    .replace(/--not-created\b/g, '“Never created”');
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

function codeOf(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const code: unknown = Reflect.get(error, 'code');
  return typeof code === 'string' ? code : null;
}

function messageOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const message: unknown = Reflect.get(error, 'message');
    if (typeof message === 'string') return message;
  }
  return describeError(error);
}

@Controller('console/in-doubt')
@ConsolePage()
export class InDoubtController {
  constructor(
    @Inject(InDoubtListQuery) private readonly calls: InDoubtListQuery,
    @Inject(InDoubtService) private readonly verdicts: InDoubtService,
    @Inject(Database) private readonly database: Database,
    @Inject(ConsolePageKit) private readonly kit: ConsolePageKit,
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
    const session = this.kit.session(request);
    const paymentId = formField(request.body, 'paymentId').trim();
    const notCreated = formField(request.body, 'notCreated').trim() !== '';
    const notice = await this.decide(session, orderId, paymentId, notCreated);
    return this.render(request, '', notice);
  }

  private async decide(
    session: ConsoleSession,
    orderId: string,
    paymentId: string,
    notCreated: boolean,
  ): Promise<VerdictNotice> {
    const refuse = async (why: string, code: string): Promise<VerdictNotice> => {
      await this.kit.record(session, 'verdict', orderId, 'refused', { why: code });
      return { orderId, outcome: 'refused', lines: [why] };
    };
    if (paymentId !== '' && notCreated) {
      return refuse(
        'Give one verdict: either the Payflow payment id, or “never created”. Nothing changed.',
        'CONSOLE.TWO_VERDICTS',
      );
    }
    if (paymentId === '' && !notCreated) {
      return refuse(
        'Give a verdict: the Payflow payment id you found, or “never created”. Nothing changed.',
        'CONSOLE.NO_VERDICT',
      );
    }
    if (paymentId.length > 100 || /\s/.test(paymentId)) {
      return refuse('That is not a Payflow payment id. Nothing changed.', 'CONSOLE.BAD_PAYMENT_ID');
    }
    const verdict: Verdict = notCreated
      ? { kind: 'not_created' }
      : { kind: 'payment_found', payflowId: paymentId };
    const details = {
      verdict: verdict.kind,
      payflowId: verdict.kind === 'payment_found' ? verdict.payflowId : null,
    };
    try {
      const outcome = await this.verdicts.resolve({
        orderId,
        verdict,
        decidedBy: `${session.operator} (console)`,
      });
      await this.kit.record(session, 'verdict', orderId, 'done', {
        ...details,
        result: outcome.kind,
        replayedMessages: outcome.replayed?.messages ?? 0,
      });
      return { orderId, outcome: 'done', lines: outcome.lines.map(consoleWords) };
    } catch (error) {
      const code = codeOf(error);
      if (code?.startsWith('IN_DOUBT.') === true) {
        await this.kit.record(session, 'verdict', orderId, 'refused', { ...details, why: code });
        return { orderId, outcome: 'refused', lines: [consoleWords(messageOf(error))] };
      }
      await this.kit.record(session, 'verdict', orderId, 'failed', {
        ...details,
        error: describeError(error),
      });
      return {
        orderId,
        outcome: 'failed',
        lines: [`The verdict could not be completed: ${describeError(error)}`],
      };
    }
  }

  private async render(
    request: FastifyRequest,
    orderId: string,
    notice: VerdictNotice | null,
  ): Promise<string> {
    const session = this.kit.session(request);
    const rows =
      orderId === ''
        ? await this.calls.list(this.database.sql)
        : await this.calls.ofOrder(this.database.sql, orderId);
    const now = new Date();
    return this.kit.render<InDoubtModel>(
      'operations/in-doubt/in-doubt',
      { title: 'In doubt', section: 'in-doubt', session },
      { entries: rows.map((row) => entryOf(inDoubtItem(row, now))), orderId, notice },
    );
  }
}
