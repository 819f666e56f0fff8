/**
 * The console's replays in progress: a replay runs in the background (an order at a time,
 * like `dlq replay`), and its page shows how far it got, refreshing itself until it is
 * done. The progress is the CLI's: the plan's orders and messages, then each order's
 * messages as it is replayed. Kept in memory, the last 50; the audit trail keeps what was
 * done for good.
 */
import { randomUUID } from 'node:crypto';
import { describeError } from '../../../errors/app-error.js';
import type {
  ReplayGroup,
  ReplayPlan,
  ReplayProgress,
} from '../../../dead-letters/replay/dead-letter-replay.service.js';

export type ReplayJobState = 'running' | 'done' | 'failed';

export interface ReplayJobView {
  readonly id: string;
  readonly operator: string;
  /** What was asked for, in words ("order ORD-1", "reason mapping_failed, since …"). */
  readonly selection: string;
  readonly state: ReplayJobState;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  /** Orders (and key-less letters) planned; null until planned. */
  readonly plannedGroups: number | null;
  readonly plannedMessages: number | null;
  readonly doneGroups: number;
  readonly replayedMessages: number;
  /** Letters another replay had taken meanwhile. */
  readonly skipped: number;
  /** The orders replayed so far (the first 50), to open their pages. */
  readonly orders: readonly string[];
  readonly error: string | null;
}

/** What a running replay reports (ReplayProgress, and the orders it went through). */
export interface ReplayTracker extends ReplayProgress {
  /** A group (an order, or a key-less letter) is replayed with `messages` messages. */
  orderDone(orderId: string | null, messages: number, skipped: number): void;
}

type MutableJob = {
  -readonly [K in keyof ReplayJobView]: K extends 'orders' ? string[] : ReplayJobView[K];
};

const KEPT = 50;

export class ReplayJobs {
  private readonly jobs = new Map<string, MutableJob>();

  /**
   * Starts `run` in the background and returns the job's id at once. `run` reports through
   * the tracker; its result or error ends the job, then `finished` is told (the audit).
   */
  start<T>(
    operator: string,
    selection: string,
    run: (tracker: ReplayTracker) => Promise<T>,
    finished: (job: ReplayJobView, result: T | null, error: unknown) => Promise<void>,
  ): string {
    const job: MutableJob = {
      id: randomUUID(),
      operator,
      selection,
      state: 'running',
      startedAt: new Date().toISOString(),
      finishedAt: null,
      plannedGroups: null,
      plannedMessages: null,
      doneGroups: 0,
      replayedMessages: 0,
      skipped: 0,
      orders: [],
      error: null,
    };
    this.jobs.set(job.id, job);
    while (this.jobs.size > KEPT) {
      const oldest = this.jobs.keys().next().value;
      if (oldest === undefined) break;
      this.jobs.delete(oldest);
    }
    const tracker: ReplayTracker = {
      start: (plan: ReplayPlan) => {
        job.plannedGroups = plan.groups.length;
        job.plannedMessages = plan.messages;
      },
      advance: (group: ReplayGroup, messages: number) => {
        tracker.orderDone(group.orderId, messages, Math.max(0, group.letters.length - messages));
      },
      orderDone: (orderId, messages, skipped) => {
        job.doneGroups += 1;
        job.replayedMessages += messages;
        job.skipped += skipped;
        if (orderId !== null && messages > 0 && job.orders.length < 50) job.orders.push(orderId);
      },
      stop: () => undefined,
    };
    void (async () => {
      let result: T | null = null;
      let failure: unknown = null;
      try {
        result = await run(tracker);
        job.state = 'done';
      } catch (error) {
        failure = error;
        job.state = 'failed';
        job.error = describeError(error);
      }
      job.finishedAt = new Date().toISOString();
      try {
        await finished({ ...job, orders: [...job.orders] }, result, failure);
      } catch {
        // The audit row could not be written: the job's page still says what happened.
      }
    })();
    return job.id;
  }

  get(id: string): ReplayJobView | null {
    const job = this.jobs.get(id);
    return job === undefined ? null : { ...job, orders: [...job.orders] };
  }

  /** Whether every job has ended (tests wait for it). */
  idle(): boolean {
    return [...this.jobs.values()].every((job) => job.state !== 'running');
  }
}
