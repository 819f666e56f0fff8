/**
 * `GET /console/orders/{orderId}`: the order's whole story (OrderTimelineQuery), newest
 * last, with its payments, a text to copy into a ticket, and what can be done (replay its
 * dead letters, discard one that will never take effect, resolve its call in doubt: the
 * forms post to those pages' actions).
 * `POST /console/orders/{orderId}/contact` shows the customer's e-mail and phone in clear,
 * once, and records that it was asked for.
 * `POST /console/orders/{orderId}/privacy/erase` (form: `confirm=erase`) erases the order's
 * personal data as `privacy erase --order` does (ConsoleErasures), answered with the page
 * and what the erasure did. Operators only (the session guard refuses a viewer's POST).
 */
import {
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Req,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Database } from '../../database/database.js';
import { DeadLetterListQuery } from '../../operator/dead-letters/dead-letter-list.query.js';
import type { DeadLetterView } from '../../operator/dead-letters/dead-letter.view.js';
import {
  CustomerContactQuery,
  masked,
  type CustomerContact,
} from '../../operator/order-timeline/customer-contact.query.js';
import { OrderTimelineQuery } from '../../operator/order-timeline/order-timeline.query.js';
import {
  KIND_LABELS,
  timelineText,
  type OrderTimeline,
} from '../../operator/order-timeline/order-timeline.view.js';
import { ConsolePage, HtmlPage } from '../page/console-page.decorator.js';
import { ConsolePageServices } from '../page/console-page-services.js';
import { formField } from '../access/console-request.js';
import type { ConsoleSession } from '../sign-in/session-store.js';
import { ConsoleErasures, erasureOrderIdSchema, type ErasureNotice } from './console-erasures.js';

export interface OrderModel {
  readonly timeline: OrderTimeline;
  readonly kindLabels: typeof KIND_LABELS;
  readonly ticket: string;
  readonly contact: CustomerContact | null;
  readonly contactRevealed: boolean;
  /** Dead letters of the order neither replayed nor discarded (a replay would unblock it). */
  readonly waitingLetters: number;
  /** Those letters, oldest first, each with whether it may be discarded. */
  readonly letters: readonly DeadLetterView[];
  readonly inDoubtCalls: number;
  /** What the erasure just asked for did (null unless this answers one). */
  readonly erasure: ErasureNotice | null;
}

interface RenderOptions {
  readonly reveal: boolean;
  readonly erasure: ErasureNotice | null;
}

@Controller('console/orders')
@ConsolePage()
export class OrderController {
  private readonly contacts = new CustomerContactQuery();

  constructor(
    @Inject(OrderTimelineQuery) private readonly timelines: OrderTimelineQuery,
    @Inject(DeadLetterListQuery) private readonly deadLetters: DeadLetterListQuery,
    @Inject(Database) private readonly database: Database,
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
    @Inject(ConsoleErasures) private readonly erasures: ConsoleErasures,
  ) {}

  @Get(':orderId')
  @HtmlPage()
  async show(@Req() request: FastifyRequest, @Param('orderId') orderId: string): Promise<string> {
    return this.render(request, orderId, { reveal: false, erasure: null });
  }

  @Post(':orderId/contact')
  @HtmlPage()
  async reveal(@Req() request: FastifyRequest, @Param('orderId') orderId: string): Promise<string> {
    return this.render(request, orderId, { reveal: true, erasure: null });
  }

  @Post(':orderId/privacy/erase')
  @HtmlPage()
  // The answer is the order's page with what the erasure did: a page, not a created resource.
  @HttpCode(200)
  async erase(
    @Req() request: FastifyRequest,
    @Param('orderId') orderIdText: string,
  ): Promise<string> {
    const session = this.pages.session(request);
    const parsed = erasureOrderIdSchema.safeParse(orderIdText);
    if (!parsed.success) throw new NotFoundException();
    const orderId = parsed.data;
    if ((await this.timelines.timeline(orderId)) === null) throw new NotFoundException();
    const notice = await this.erasures.erase(session, orderId, {
      confirm: formField(request.body, 'confirm'),
    });
    return this.render(request, orderId, { reveal: false, erasure: notice });
  }

  private async render(
    request: FastifyRequest,
    orderId: string,
    { reveal, erasure }: RenderOptions,
  ): Promise<string> {
    const session = this.pages.session(request);
    let timeline = await this.timelines.timeline(orderId);
    if (timeline === null) throw new NotFoundException();
    const contact = await this.contacts.contact(this.database.sql, orderId);
    const revealed = reveal && contact !== null;
    if (reveal) {
      await this.recordReveal(session, orderId, contact);
      // Read again: the page shows the asking it just recorded.
      timeline = (await this.timelines.timeline(orderId)) ?? timeline;
    }
    // From the letters themselves: the timeline does not tell a discarded letter apart.
    const letters = await this.deadLetters.waitingOfOrder(orderId);
    const inDoubtCalls = timeline.entries.filter(
      (entry) => entry.kind === 'payflow_call' && entry.outcome.startsWith('in_doubt'),
    ).length;
    const title = `Order ${timeline.order.orderNumber ?? orderId}`;
    return this.pages.render<OrderModel>(
      'order/order',
      { title, section: 'search', session },
      {
        timeline,
        kindLabels: KIND_LABELS,
        ticket: timelineText(timeline),
        contact: contact === null ? null : revealed ? contact : masked(contact),
        contactRevealed: revealed,
        waitingLetters: letters.length,
        letters,
        inDoubtCalls,
        erasure,
      },
    );
  }

  private async recordReveal(
    session: ConsoleSession,
    orderId: string,
    contact: CustomerContact | null,
  ): Promise<void> {
    await this.pages.record(
      session,
      'reveal_contact',
      orderId,
      contact === null ? 'refused' : 'done',
      contact === null
        ? { why: 'no contact data kept for this order' }
        : { what: 'customer e-mail and phone', fromEventId: contact.fromEventId },
    );
  }
}
