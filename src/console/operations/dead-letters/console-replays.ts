/**
 * The console's replays of dead letters: what a replay of a filter would take, and a replay
 * started in the background (ReplayJobs, kept here) by the same DeadLetterReplayService and rules as
 * `dlq replay` (an order is replayed whole, in the order its letters failed). A filter of
 * reason and time alone is handed to the service as `--reason` / `--since`; with an
 * organization or an end time, the orders the filter selects are replayed one by one
 * (`--order` each). Recorded per order replayed.
 */
import { Inject, Injectable } from '@nestjs/common';
import { DEAD_LETTER_REASONS } from '../../../errors/app-error.js';
import {
  DeadLetterReplayService,
  type ReplayResult,
} from '../../../dead-letters/replay/dead-letter-replay.service.js';
import type { ReplayFilter } from '../../../dead-letters/replay/replay-filter.js';
import {
  DeadLetterListQuery,
  type DeadLetterFilter,
} from '../../../operator/dead-letters/dead-letter-list.query.js';
import { ConsoleAudit } from '../../access/console-audit.js';
import type { ConsoleSession } from '../../sign-in/session-store.js';
import { ReplayJobs, type ReplayJobView, type ReplayTracker } from './replay-jobs.js';

/** Most orders one filtered replay takes (narrow the filter for more). */
export const MAX_REPLAY_ORDERS = 1000;

/** What a replay replays: one order, or the letters a filter selects. */
export type ReplaySelection = { readonly orderId: string } | { readonly filter: DeadLetterFilter };

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

@Injectable()
export class ConsoleReplays {
  private readonly jobs = new ReplayJobs();

  constructor(
    @Inject(DeadLetterListQuery) private readonly letters: DeadLetterListQuery,
    @Inject(DeadLetterReplayService) private readonly replays: DeadLetterReplayService,
    @Inject(ConsoleAudit) private readonly audit: ConsoleAudit,
  ) {}

  /** What a replay of the filter would take now (messages unknown when replayed by order). */
  async preview(filter: DeadLetterFilter): Promise<{ orders: number; messages: number | null }> {
    const direct = serviceFilter(filter);
    if (direct !== null) {
      const plan = await this.replays.plan(direct);
      return { orders: plan.groups.length, messages: plan.messages };
    }
    const orders = await this.letters.waitingOrders(filter, MAX_REPLAY_ORDERS);
    return { orders: orders.length, messages: null };
  }

  /** Starts the replay in the background for the signed-in person; the job's id. */
  start(session: ConsoleSession, selection: ReplaySelection): string {
    let described: string;
    let run: (tracker: ReplayTracker) => Promise<ReplayResult | { orders: number }>;
    if ('orderId' in selection) {
      const { orderId } = selection;
      described = `order ${orderId}`;
      run = (tracker) => this.replays.replay({ orderId }, tracker);
    } else {
      const { filter } = selection;
      described = describeSelection(filter);
      const direct = serviceFilter(filter);
      run =
        direct !== null
          ? (tracker) => this.replays.replay(direct, tracker)
          : (tracker) => this.replayOrders(filter, tracker);
    }
    const orderId = 'orderId' in selection ? selection.orderId : null;
    return this.jobs.start(session.operator, described, run, (job, _result, error) =>
      this.record(session, job, orderId, error),
    );
  }

  /** A replay started here, or null when unknown (or long forgotten). */
  job(jobId: string): ReplayJobView | null {
    return this.jobs.get(jobId);
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
      await this.audit.record(session, 'replay', orderId, 'failed', {
        ...details,
        error: job.error,
      });
      return;
    }
    const orders = orderId !== null ? [orderId] : job.orders;
    if (orders.length === 0) {
      await this.audit.record(session, 'replay', null, 'done', { ...details, orders: 0 });
      return;
    }
    for (const order of orders) {
      await this.audit.record(session, 'replay', order, 'done', {
        ...details,
        orders: job.doneGroups,
      });
    }
  }
}
