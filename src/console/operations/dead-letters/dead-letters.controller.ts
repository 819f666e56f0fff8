/**
 * `GET /console/dead-letters`: the dead letters, filtered by reason, organization and time
 * (and whether they were replayed), newest first, a page at a time; what a replay of the
 * filter would take. `GET /console/dead-letters/{id}`: one letter's message as received
 * (personal data masked: names, addresses, e-mails, phones, VINs, number plates, document
 * contents; `POST …/{id}/contact` shows it unmasked, recorded in the operator audit). Each
 * opening is recorded too (`view_dead_letter`: who, when, which letter; no payload value).
 *
 * `POST /console/dead-letters/replay` (form: `orderId`, or the filters): the replay of
 * `dlq replay` (ConsoleReplays: the same service and rules). It runs in the background;
 * `GET /console/dead-letters/replays/{id}` shows its progress. Recorded per order replayed.
 *
 * `POST /console/dead-letters/{eventId}/discard` (form: `reason`): the discard of `dlq
 * discard` (ConsoleDiscards: the same service and rules), answered with the list and what
 * the discard did or why it was refused. Recorded, done or refused.
 */
import {
  BadRequestException,
  Controller,
  Get,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DEAD_LETTER_REASONS } from '../../../errors/app-error.js';
import {
  DeadLetterListQuery,
  parseDeadLetterFilter,
  type DeadLetterMessage,
  type DeadLetterPage,
} from '../../../operator/dead-letters/dead-letter-list.query.js';
import { describeKinds } from '../../../operator/masking/personal-data-mask.js';
import { CONSOLE_PREFIX } from '../../console.options.js';
import { ConsolePage, HtmlPage } from '../../page/console-page.decorator.js';
import { ConsolePageServices } from '../../page/console-page-services.js';
import { formField, queryParam } from '../../access/console-request.js';
import { ConsoleDiscards, type DiscardNotice } from './console-discards.js';
import { ConsoleReplays, type ReplaySelection } from './console-replays.js';
import type { ReplayJobView } from './replay-jobs.js';

export interface DeadLettersModel {
  readonly form: Readonly<Record<'reason' | 'org' | 'from' | 'to' | 'state', string>>;
  readonly reasons: readonly string[];
  readonly problems: readonly string[];
  readonly page: DeadLetterPage;
  /** The page's own query string without the cursor (for the next page's link). */
  readonly query: string;
  /** What a replay of the filter would take now (null when the filter has problems). */
  readonly replay: { readonly orders: number; readonly messages: number | null } | null;
  /** What the discard just asked for did (null on a plain GET). */
  readonly notice: DiscardNotice | null;
}

export interface DeadLetterModel {
  readonly letter: DeadLetterMessage;
  /** The kinds of personal data the body holds, in words ("names, e-mail addresses …"). */
  readonly personalData: string;
}

export interface ReplayJobModel {
  readonly job: ReplayJobView;
}

@Controller('console/dead-letters')
@ConsolePage()
export class DeadLettersController {
  constructor(
    @Inject(DeadLetterListQuery) private readonly letters: DeadLetterListQuery,
    @Inject(ConsoleReplays) private readonly replays: ConsoleReplays,
    @Inject(ConsoleDiscards) private readonly discards: ConsoleDiscards,
    @Inject(ConsolePageServices) private readonly pages: ConsolePageServices,
  ) {}

  @Get()
  @HtmlPage()
  async list(@Req() request: FastifyRequest): Promise<string> {
    return this.renderList(request, null);
  }

  @Post(':eventId/discard')
  @HtmlPage()
  // The answer is the list with what the discard did: a page, not a created resource.
  @HttpCode(200)
  async discard(
    @Req() request: FastifyRequest,
    @Param('eventId') eventId: string,
  ): Promise<string> {
    const session = this.pages.session(request);
    const notice = await this.discards.discard(session, eventId, {
      reason: formField(request.body, 'reason'),
    });
    return this.renderList(request, notice);
  }

  private async renderList(request: FastifyRequest, notice: DiscardNotice | null): Promise<string> {
    const session = this.pages.session(request);
    const field = (name: string): string => queryParam(request, name);
    const form = {
      reason: field('reason').trim(),
      org: field('org').trim(),
      from: field('from').trim(),
      to: field('to').trim(),
      state: field('state').trim() || 'waiting',
    };
    const fields = new Map<string, string>(Object.entries(form));
    const { filter, problems } = parseDeadLetterFilter((name) => fields.get(name) ?? '');
    const page =
      problems.length > 0
        ? { letters: [], next: null }
        : await this.letters.list(filter, field('cursor'));
    const query = new URLSearchParams(
      Object.entries(form).filter(([, value]) => value !== ''),
    ).toString();
    return this.pages.render<DeadLettersModel>(
      'operations/dead-letters/dead-letters',
      { title: 'Dead letters', section: 'dead-letters', session },
      {
        form,
        reasons: DEAD_LETTER_REASONS,
        problems,
        page,
        query,
        replay: problems.length > 0 ? null : await this.replays.preview(filter),
        notice,
      },
    );
  }

  @Get('replays/:jobId')
  @HtmlPage()
  progress(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('jobId') jobId: string,
  ): string {
    const session = this.pages.session(request);
    const job = this.replays.job(jobId);
    if (job === null) throw new NotFoundException();
    // Without JavaScript too: the page reloads itself every second until the replay ends.
    if (job.state === 'running') void reply.header('refresh', '1');
    return this.pages.render<ReplayJobModel>(
      'operations/dead-letters/replay',
      { title: 'Replay', section: 'dead-letters', session },
      { job },
    );
  }

  @Get(':id')
  @HtmlPage()
  async message(@Req() request: FastifyRequest, @Param('id') id: string): Promise<string> {
    return this.renderMessage(request, id, false);
  }

  @Post(':id/contact')
  @HtmlPage()
  async reveal(@Req() request: FastifyRequest, @Param('id') id: string): Promise<string> {
    return this.renderMessage(request, id, true);
  }

  @Post('replay')
  async replay(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const session = this.pages.session(request);
    const body = request.body;
    const orderId = formField(body, 'orderId').trim();
    let selection: ReplaySelection;
    if (orderId !== '') {
      if (orderId.length > 200)
        throw new BadRequestException('an order id is at most 200 characters');
      selection = { orderId };
    } else {
      const { filter, problems } = parseDeadLetterFilter((name) => formField(body, name));
      if (problems.length > 0) {
        await this.pages.record(session, 'replay', null, 'refused', {
          why: `unreadable filter: ${problems.join(', ')}`,
        });
        throw new BadRequestException(`these filters could not be read: ${problems.join(', ')}`);
      }
      selection = { filter };
    }
    const jobId = this.replays.start(session, selection);
    void reply
      .code(303)
      .header('location', `${CONSOLE_PREFIX}/dead-letters/replays/${encodeURIComponent(jobId)}`);
  }

  private async renderMessage(
    request: FastifyRequest,
    id: string,
    reveal: boolean,
  ): Promise<string> {
    const session = this.pages.session(request);
    const letter = await this.letters.message(id, reveal);
    if (letter === null) throw new NotFoundException();
    if (!reveal) {
      // Who opened which letter, and when: one row per page view, never the payload.
      await this.pages.record(session, 'view_dead_letter', letter.orderId, 'done', {
        deadLetter: letter.id,
        eventId: letter.eventId,
      });
    } else {
      await this.pages.record(
        session,
        'reveal_contact',
        letter.orderId,
        letter.hasContact ? 'done' : 'refused',
        letter.hasContact
          ? {
              what: `personal data in a dead letter, unmasked: ${describeKinds(letter.personalData)}`,
              deadLetter: letter.id,
              kinds: letter.personalData.join(','),
            }
          : { why: 'the message holds no personal data to unmask', deadLetter: letter.id },
      );
    }
    return this.pages.render<DeadLetterModel>(
      'operations/dead-letters/dead-letter',
      { title: `Dead letter ${letter.id}`, section: 'dead-letters', session },
      { letter, personalData: describeKinds(letter.personalData) },
    );
  }
}
