/**
 * The one way an event leaves payflow-bridge: OutboxWriter checks it against its schema
 * (src/events), picks its topic and key from its type (OUTBOUND_EVENTS) and writes it to
 * the outbox in the caller's transaction, so that it is published once that commits.
 *
 * An event that breaks its schema is a bug: InvalidOutboundEventError, and nothing of
 * the caller's unit is written.
 *
 * Waking the relay: only the owner of a transaction knows when it committed, so the owner
 * calls OutboxCommitted (outbox-committed.ts) after its commit: for `defer`, the worker's
 * PipelineWiringModule through `afterEachCommitOf(batcher)`; for `append`, the webhook
 * processor, the reconciliation poller and the settlement pull, each of which injects it
 * (never optional). The relay's idle poll is only the safety net for a lost wake-up.
 *
 * Tracing (CONTRACT §8): an event's `trace`, or else the `trace` given to the call, is
 * written as its `traceparent` / `tracestate` headers in the outbox row, so the context
 * survives a restart and leaves with the event. Dead letters keep the original message's
 * headers, its trace headers included.
 */
import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../errors/app-error.js';
import type { AppConfig } from '../config/app-config.js';
import type { Sql } from '../database/database.js';
import type { BatchSql } from '../database/transaction-batcher.js';
import type { DeadLetter } from '../messaging/dead-letter.port.js';
import { buildDeadLetterMessage, deadLetterTopicFor } from '../messaging/dead-letter-headers.js';
import type { OutboundMessage } from '../messaging/messaging.ports.js';
import { summarizeIssues } from '../errors/zod-issues.js';
import { OutboxRepository } from './outbox.repository.js';
import { deadLetterHeadersSchema } from '../events/dead-letter-headers.schema.js';
import { eventMessage, stampEvent, type EventTrace } from '../events/event-message.js';
import {
  isOutboundEventType,
  OUTBOUND_EVENTS,
  type OutboundTopic,
  type TypedOutboundEvent,
} from '../events/outbound-events.js';

export const OUTBOUND_TOPICS = Symbol('OUTBOUND_TOPICS');

/** The configured topics outbound events go to. */
export interface OutboundTopics extends Readonly<Record<OutboundTopic, string>> {
  /** `${TOPIC_ORDERS}.dlq` */
  readonly deadLetters: string;
}

export function outboundTopicsFromConfig(
  config: Pick<AppConfig, 'TOPIC_ORDERS' | 'TOPIC_PAYMENT_STATUS' | 'TOPIC_SETTLEMENTS'>,
): OutboundTopics {
  return {
    paymentStatus: config.TOPIC_PAYMENT_STATUS,
    settlements: config.TOPIC_SETTLEMENTS,
    deadLetters: deadLetterTopicFor(config.TOPIC_ORDERS),
  };
}

/**
 * A payment status or settlement event (an envelope), before its id and time: its type and
 * its data as one pair, the data typed from that type's schema, so a wrong payload fails
 * `tsc`; the check against the schema in `messages` stays as a second line.
 */
export type OutboundEvent = TypedOutboundEvent;

export const DEAD_LETTER = 'dead_letter';

/** An order event that cannot take effect, for the dead-letter topic (CONTRACT §4). */
export interface DeadLetterEvent {
  readonly type: typeof DEAD_LETTER;
  readonly letter: DeadLetter;
}

export type OutboxEvent = OutboundEvent | DeadLetterEvent;

/** An outbound event does not match its schema: a bug in the code that made it. */
export class InvalidOutboundEventError extends AppError {
  readonly code = 'EVENTS.INVALID_OUTBOUND';
  readonly transient = false;
}

@Injectable()
export class OutboxWriter {
  constructor(
    @Inject(OutboxRepository) private readonly outbox: OutboxRepository,
    @Inject(OUTBOUND_TOPICS) private readonly topics: OutboundTopics,
  ) {}

  /** A writer outside Nest (the CLI, tools). */
  static forTopics(topics: OutboundTopics): OutboxWriter {
    return new OutboxWriter(new OutboxRepository(), topics);
  }

  /**
   * Checks the events and writes them in `tx`; they are published after it commits.
   * `trace`: the trace of the events that carry none of their own.
   */
  async append(
    tx: Sql,
    events: readonly OutboxEvent[],
    now: Date = new Date(),
    trace?: EventTrace,
  ): Promise<void> {
    await this.outbox.add(tx, this.messages(events, now, trace));
  }

  /**
   * Checks the events now (a bad one fails the caller's unit) and writes them with the
   * other events of the batch, in one insert at its end.
   */
  defer(
    tx: BatchSql,
    events: readonly OutboxEvent[],
    now: Date = new Date(),
    trace?: EventTrace,
  ): void {
    const messages = this.messages(events, now, trace);
    if (messages.length === 0) return;
    tx.defer(this, messages, (sql, all) => this.outbox.add(sql, all));
  }

  /** The outbox messages of the events, each checked against its schema. */
  messages(
    events: readonly OutboxEvent[],
    now: Date = new Date(),
    trace?: EventTrace,
  ): OutboundMessage[] {
    return events.map((event) =>
      event.type === DEAD_LETTER
        ? this.deadLetterMessage(event.letter)
        : this.message(event, now, event.trace ?? trace),
    );
  }

  private message(event: OutboundEvent, now: Date, trace: EventTrace | undefined): OutboundMessage {
    const type: string = event.type;
    if (!isOutboundEventType(type)) {
      throw new InvalidOutboundEventError(`no schema for outbound event type "${type}"`, {
        metadata: { type },
      });
    }
    const spec = OUTBOUND_EVENTS[type];
    const envelope = stampEvent(event, now);
    const checked = spec.check(envelope);
    if (!checked.ok) {
      throw new InvalidOutboundEventError(
        `${type} of order ${event.orderId ?? '(none)'} does not match its schema: ${summarizeIssues(checked.error)}`,
        { metadata: { type, orderId: event.orderId, eventId: envelope.eventId } },
      );
    }
    return eventMessage(this.topics[spec.topic], checked.key, envelope, trace);
  }

  private deadLetterMessage(letter: DeadLetter): OutboundMessage {
    const message = buildDeadLetterMessage(letter, this.topics.deadLetters);
    const checked = deadLetterHeadersSchema.safeParse(message.headers ?? {});
    if (!checked.success) {
      throw new InvalidOutboundEventError(
        `dead letter of ${letter.message.topic}/${letter.message.partition}/${letter.message.offset} does not match its schema: ${summarizeIssues(checked.error)}`,
        { metadata: { orderId: letter.orderId, eventId: letter.eventId } },
      );
    }
    return message;
  }
}
