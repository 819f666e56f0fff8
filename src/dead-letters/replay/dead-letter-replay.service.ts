/**
 * `dlq replay`: puts dead-lettered order events back on the input topic, with their
 * original key, value and headers (not the x-dlq-* ones), in their original order.
 *
 * The unit of replay is the ORDER: once one event of an order is dead-lettered, its later
 * events follow it (blocked_by_earlier_failure), so an order is replayed whole, every
 * unreplayed letter in id order, or not at all. Key-less letters (no order id) are
 * replayed one by one.
 *
 * Crash safety. For each order one transaction (1) locks the order and its unreplayed
 * letters, (2) writes their messages into the outbox, (3) marks them replayed and (4)
 * unblocks the order (OrderRequeue, which a discard shares). The outbox relay then
 * publishes them (this command flushes the
 * order's outbox bucket right away; the worker's relays would otherwise). So:
 * - a dead letter is never lost: it is marked replayed only together with a committed
 *   outbox row, which the relay publishes at least once;
 * - an order is never unblocked without its parked events committed for publication,
 *   and they are published before anything the relay writes for that key later;
 * - a crash after the broker acknowledged but before the relay marked the rows published
 *   publishes them again; the pipeline ignores the duplicates by `eventId`.
 * Unblocking in the same transaction (before the messages reach the topic) matters: a
 * replayed event must find its order unblocked, or it would be dead-lettered again.
 */
import type { Database } from '../../database/database.js';
import type { OutboxFlusher } from '../../outbox/relay.options.js';
import { outboxBucket, type OutboxRepository } from '../../outbox/outbox.repository.js';
import type {
  DeadLetterRepository,
  DeadLetterSummary,
  ReplayableDeadLetter,
} from '../dead-letter.repository.js';
import { OrderRepository } from '../../orders/order.repository.js';
import { OrderRequeue } from './order-requeue.js';
import type { ReplayFilter } from './replay-filter.js';

/** The letters replayed together: one order's, or a single key-less one. */
export interface ReplayGroup {
  readonly orderId: string | null;
  readonly letters: readonly DeadLetterSummary[];
}

export interface ReplayPlan {
  readonly groups: readonly ReplayGroup[];
  /** Orders (groups with an order id). */
  readonly orders: number;
  /** Key-less letters. */
  readonly keyless: number;
  /** Messages, all groups together. */
  readonly messages: number;
  /** Messages per dead-letter reason. */
  readonly byReason: Readonly<Record<string, number>>;
  /**
   * Groups that are not replayed because one of their letters had its personal data erased
   * (`privacy erase`): left out of `groups` and of every count above.
   */
  readonly refused?: readonly ReplayGroup[];
}

export interface ReplayResult extends ReplayPlan {
  /** Planned letters that another replay had taken by the time their order came up. */
  readonly skipped: number;
}

export interface ReplayProgress {
  start(plan: ReplayPlan): void;
  /** `group` is done; `messages` of it were replayed (it may differ from the plan). */
  advance(group: ReplayGroup, messages: number): void;
  stop(): void;
}

export interface DeadLetterReplayOptions {
  /** Where the events go again: TOPIC_ORDERS. */
  readonly topic: string;
  /** How long to wait for one order's messages to be published. Default 30 s. */
  readonly flushTimeoutMs?: number;
}

/** The replay committed some orders but could not publish them in time. */
export class ReplayNotPublishedError extends Error {
  readonly code = 'REPLAY.NOT_PUBLISHED';
  constructor(
    readonly orderId: string | null,
    readonly committedMessages: number,
    readonly pendingMessages: number,
    timeoutMs: number,
  ) {
    super(
      `${committedMessages} message(s)${orderId === null ? '' : ` of order ${orderId}`} are committed for replay but ${pendingMessages} of ` +
        `them were not published within ${timeoutMs} ms (is Kafka reachable?); they wait in ` +
        `the outbox and the worker's outbox relay publishes them, in order, when it can`,
    );
    this.name = 'ReplayNotPublishedError';
  }
}

export class DeadLetterReplayService {
  private readonly flushTimeoutMs: number;
  private readonly requeue: OrderRequeue;

  constructor(
    private readonly database: Database,
    private readonly letters: DeadLetterRepository,
    outbox: OutboxRepository,
    private readonly flusher: OutboxFlusher,
    options: DeadLetterReplayOptions,
    private readonly orders: OrderRepository = new OrderRepository(),
  ) {
    this.flushTimeoutMs = options.flushTimeoutMs ?? 30_000;
    this.requeue = new OrderRequeue(letters, outbox, orders, options.topic);
  }

  /** What a replay with this filter would do now. Changes nothing. */
  async plan(filter: ReplayFilter): Promise<ReplayPlan> {
    const letters = await this.letters.selectForReplay(this.database.sql, filter);
    const groups: ReplayGroup[] = [];
    const byOrder = new Map<string, DeadLetterSummary[]>();
    for (const letter of letters) {
      if (letter.orderId === null) {
        groups.push({ orderId: null, letters: [letter] });
        continue;
      }
      let list = byOrder.get(letter.orderId);
      if (!list) {
        // Groups come in the order of their first letter: the order things failed in.
        list = [];
        byOrder.set(letter.orderId, list);
        groups.push({ orderId: letter.orderId, letters: list });
      }
      list.push(letter);
    }
    // An order with an erased letter is refused whole: its events are replayed together.
    const erased = await this.letters.erasedAmong(
      this.database.sql,
      letters.map((letter) => letter.id),
    );
    const refused = groups.filter((group) => group.letters.some((letter) => erased.has(letter.id)));
    const replayable = groups.filter((group) => !refused.includes(group));
    return {
      ...summarize(
        replayable,
        replayable.flatMap((group) => group.letters),
      ),
      refused,
    };
  }

  /** Replays what `plan(filter)` selects, order by order. */
  async replay(filter: ReplayFilter, progress?: ReplayProgress): Promise<ReplayResult> {
    const plan = await this.plan(filter);
    progress?.start(plan);
    const replayed: DeadLetterSummary[] = [];
    const groups: ReplayGroup[] = [];
    let skipped = 0;
    try {
      for (const group of plan.groups) {
        const letters = await this.replayGroup(group);
        replayed.push(...letters);
        if (letters.length > 0) groups.push({ orderId: group.orderId, letters });
        skipped += Math.max(0, group.letters.length - letters.length);
        progress?.advance(group, letters.length);
      }
    } finally {
      progress?.stop();
    }
    return { ...summarize(groups, replayed), skipped, refused: plan.refused ?? [] };
  }

  /** One group: commit it to the outbox, then publish its bucket now. */
  private async replayGroup(group: ReplayGroup): Promise<ReplayableDeadLetter[]> {
    const { orderId } = group;
    const letters = await this.database.transaction(async (tx) => {
      if (orderId === null) return this.requeue.keyless(tx, group.letters[0]?.id ?? '0');
      await this.orders.lock(tx, orderId);
      return this.requeue.order(tx, orderId);
    });
    if (letters.length === 0) return letters;

    const key = letters[0]?.key ?? null;
    const flushed = await this.flusher.flush(this.flushTimeoutMs, {
      buckets: [outboxBucket(key === null ? null : key.toString())],
    });
    if (!flushed.drained) {
      throw new ReplayNotPublishedError(
        group.orderId,
        letters.length,
        flushed.remaining,
        this.flushTimeoutMs,
      );
    }
    return letters;
  }
}

function summarize(
  groups: readonly ReplayGroup[],
  letters: readonly DeadLetterSummary[],
): ReplayPlan {
  const byReason: Record<string, number> = {};
  for (const letter of letters) byReason[letter.reason] = (byReason[letter.reason] ?? 0) + 1;
  return {
    groups,
    orders: groups.filter((group) => group.orderId !== null).length,
    keyless: groups.filter((group) => group.orderId === null).length,
    messages: letters.length,
    byReason,
  };
}
