/**
 * `GET /console/dead-letters`: the dead letters, filtered by reason, organization and time
 * (and whether they were replayed), newest first, a page at a time; what a replay of the
 * filter would take. `GET /console/dead-letters/{id}`: one letter's message as received
 * (contact data masked; `POST …/{id}/contact` shows it, recorded).
 *
 * `POST /console/dead-letters/replay` (form: `orderId`, or the filters): the replay of
 * `dlq replay`, by the same DeadLetterReplayService and rules (an order is replayed whole,
 * in the order its letters failed). A filter of reason and time alone is handed to the
 * service as `--reason` / `--since`; with an organization or an end time, the orders the
 * filter selects are replayed one by one (`--order` each). It runs in the background;
 * `GET /console/dead-letters/replays/{id}` shows its progress. Recorded per order replayed.
 */
import {
  BadRequestException,
  Controller,
  Get,
  Inject,
  NotFoundException,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DEAD_LETTER_REASONS } from '../../../common/app-error.js';
import {
  DeadLetterReplayService,
  type ReplayResult,
} from '../../../dead-letters/replay/dead-letter-replay.service.js';
import type { ReplayFilter } from '../../../dead-letters/replay/replay-filter.js';
import {
  DeadLetterListQuery,
  parseDeadLetterFilter,
  type DeadLetterFilter,
  type DeadLetterMessage,
  type DeadLetterPage,
} from '../../../operator/dead-letters/dead-letter-list.query.js';
import { CONSOLE_PREFIX } from '../../console.options.js';
import { ConsolePage, HtmlPage } from '../../shared/console-page.decorator.js';
import { ConsolePageKit } from '../../shared/console-page-kit.js';
import { formField, queryParam } from '../../shared/console-request.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';
import { ReplayJobs, type ReplayJobView, type ReplayTracker } from './replay-jobs.js';

/** Most orders one filtered replay takes (narrow the filter for more). */
export const MAX_REPLAY_ORDERS = 1000;

export interface DeadLettersModel {
  readonly form: Readonly<Record<'reason' | 'org' | 'from' | 'to' | 'state', string>>;
  readonly reasons: readonly string[];
  readonly problems: readonly string[];
  readonly page: DeadLetterPage;
  /** The page's own query string without the cursor (for the next page's link). */
  readonly query: string;
  /** What a replay of the filter would take now (null when the filter has problems). */
  readonly replay: { readonly orders: number; readonly messages: number | null } | null;
}

export interface DeadLetterModel {
  readonly letter: DeadLetterMessage;
}

export interface ReplayJobModel {
  readonly job: ReplayJobView;
}

/** The filter, when the service takes it as it is (`--reason`, `--since`); else null. */
function serviceFilter(filter: DeadLetterFilter): ReplayFilter | null {
  if (filter.organizationId !== undefined || filter.to !== undefined) return null;
  const reason = DEAD_LETTER_REASONS.find((known) => known === filter.reason);
  return {
    ...(reason === undefined ? {} : { reason }),
    ...(filter.from === undefined ? {} : { since: filter.from }),
  };
}

function describeSelection(filter: DeadLetterFilter): string {
  const parts = [
    filter.reason === undefined ? null : `reason ${filter.reason}`,
    filter.organizationId === undefined ? null : `organization ${filter.organizationId}`,
    filter.from === undefined ? null : `failed since ${filter.from.toISOString()}`,
    filter.to === undefined ? null : `failed before ${filter.to.toISOString()}`,
  ].filter((part): part is string => part !== null);
  return parts.length === 0 ? 'every dead letter that waits' : parts.join(', ');
}

@Controller('console/dead-letters')
@ConsolePage()
export class DeadLettersController {
  constructor(
    @Inject(DeadLetterListQuery) private readonly letters: DeadLetterListQuery,
    @Inject(DeadLetterReplayService) private readonly replays: DeadLetterReplayService,
    @Inject(ReplayJobs) private readonly jobs: ReplayJobs,
    @Inject(ConsolePageKit) private readonly kit: ConsolePageKit,
  ) {}

  @Get()
  @HtmlPage()
  async list(@Req() request: FastifyRequest): Promise<string> {
    const session = this.kit.session(request);
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
    return this.kit.render<DeadLettersModel>(
      'operations/dead-letters/dead-letters',
      { title: 'Dead letters', section: 'dead-letters', session },
      {
        form,
        reasons: DEAD_LETTER_REASONS,
        problems,
        page,
        query,
        replay: problems.length > 0 ? null : await this.replayPreview(filter),
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
    const session = this.kit.session(request);
    const job = this.jobs.get(jobId);
    if (job === null) throw new NotFoundException();
    // Without JavaScript too: the page reloads itself every second until the replay ends.
    if (job.state === 'running') void reply.header('refresh', '1');
    return this.kit.render<ReplayJobModel>(
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
    const session = this.kit.session(request);
    const body = request.body;
    const orderId = formField(body, 'orderId').trim();
    let selection: string;
    let run: (tracker: ReplayTracker) => Promise<ReplayResult | { orders: number }>;
    if (orderId !== '') {
      if (orderId.length > 200)
        throw new BadRequestException('an order id is at most 200 characters');
      selection = `order ${orderId}`;
      run = (tracker) => this.replays.replay({ orderId }, tracker);
    } else {
      const { filter, problems } = parseDeadLetterFilter((name) => formField(body, name));
      if (problems.length > 0) {
        await this.kit.record(session, 'replay', null, 'refused', {
          why: `unreadable filter: ${problems.join(', ')}`,
        });
        throw new BadRequestException(`these filters could not be read: ${problems.join(', ')}`);
      }
      selection = describeSelection(filter);
      const direct = serviceFilter(filter);
      run =
        direct !== null
          ? (tracker) => this.replays.replay(direct, tracker)
          : (tracker) => this.replayOrders(filter, tracker);
    }
    const jobId = this.jobs.start(session.operator, selection, run, (job, _result, error) =>
      this.record(session, job, orderId === '' ? null : orderId, error),
    );
    void reply
      .code(303)
      .header('location', `${CONSOLE_PREFIX}/dead-letters/replays/${encodeURIComponent(jobId)}`);
  }

  /** A filter the service does not take as it is: its orders, each replayed whole. */
  private async replayOrders(
    filter: DeadLetterFilter,
    tracker: ReplayTracker,
  ): Promise<{ orders: number }> {
    const orders = await this.letters.waitingOrders(filter, MAX_REPLAY_ORDERS);
    tracker.start({
      groups: orders.map((id) => ({ orderId: id, letters: [] })),
      orders: orders.length,
      keyless: 0,
      messages: 0,
      byReason: {},
    });
    for (const id of orders) {
      const result = await this.replays.replay({ orderId: id });
      tracker.orderDone(id, result.messages, result.skipped);
    }
    return { orders: orders.length };
  }

  /** The audit: one row per order replayed (its timeline shows it), or one for nothing. */
  private async record(
    session: ConsoleSession,
    job: ReplayJobView,
    orderId: string | null,
    error: unknown,
  ): Promise<void> {
    const details = {
      selection: job.selection,
      replayJob: job.id,
      messages: job.replayedMessages,
      skipped: job.skipped,
    };
    if (error !== null) {
      await this.kit.record(session, 'replay', orderId, 'failed', {
        ...details,
        error: job.error,
      });
      return;
    }
    const orders = orderId !== null ? [orderId] : job.orders;
    if (orders.length === 0) {
      await this.kit.record(session, 'replay', null, 'done', { ...details, orders: 0 });
      return;
    }
    for (const order of orders) {
      await this.kit.record(session, 'replay', order, 'done', {
        ...details,
        orders: job.doneGroups,
      });
    }
  }

  private async replayPreview(
    filter: DeadLetterFilter,
  ): Promise<{ orders: number; messages: number | null }> {
    const direct = serviceFilter(filter);
    if (direct !== null) {
      const plan = await this.replays.plan(direct);
      return { orders: plan.groups.length, messages: plan.messages };
    }
    const orders = await this.letters.waitingOrders(filter, MAX_REPLAY_ORDERS);
    return { orders: orders.length, messages: null };
  }

  private async renderMessage(
    request: FastifyRequest,
    id: string,
    reveal: boolean,
  ): Promise<string> {
    const session = this.kit.session(request);
    const letter = await this.letters.message(id, reveal);
    if (letter === null) throw new NotFoundException();
    if (reveal) {
      await this.kit.record(
        session,
        'reveal_contact',
        letter.orderId,
        letter.hasContact ? 'done' : 'refused',
        letter.hasContact
          ? { what: 'customer e-mail and phone in a dead letter', deadLetter: letter.id }
          : { why: 'the message names no e-mail or phone', deadLetter: letter.id },
      );
    }
    return this.kit.render<DeadLetterModel>(
      'operations/dead-letters/dead-letter',
      { title: `Dead letter ${letter.id}`, section: 'dead-letters', session },
      { letter },
    );
  }
}
