/**
 * Takes one order-event message from "fetched" to "done": decode it (with the injected
 * codec: this folder knows no event type), hand it to the event's handler, retry transient
 * failures with back-off (this order waits, the others go on), and give up into the dead-letter sink when the failure policy says so. "Done" means
 * the event took effect or the sink has it; only then may its offset be committed.
 *
 * Its log lines name the message's trace (`traceId` of its `traceparent` header, when it
 * has one; the handler's own lines name the trace it started otherwise).
 *
 * `process` never rejects. It returns `abandoned` when the shutdown signal cut it short
 * (a back-off wait or a failing sink): that offset is not done and will be redelivered.
 */
import type { BaseRpcContext } from '@nestjs/microservices';
import type { AppLogger } from '../../logging/logger.js';
import { describeError, type DeadLetterReason } from '../../errors/app-error.js';
import type { DeadLetterSink } from '../dead-letter.port.js';
import { decideFailure } from './failure-policy.js';
import type { DecodedEvent, InboundEventCodec, InboundMessage } from '../messaging.ports.js';
import { backoffDelayMs } from '../../timing/backoff.js';
import { sleepUnlessAborted } from '../../timing/sleep.js';
import { traceIdOfHeader } from '../../tracing/tracing.js';
import type { RetryPolicy } from './retry-policy.js';
import type { InboundEventsMetrics, ProcessOutcome } from './transport.metrics.js';

/** Calls the handler of the event's type; resolves when it took effect. */
export type EventDispatch<P = unknown, C extends BaseRpcContext = BaseRpcContext> = (
  event: DecodedEvent<P>,
  context: C,
) => Promise<void>;

export interface MessageProcessorOptions<P = unknown, C extends BaseRpcContext = BaseRpcContext> {
  /** Reads a message into an event (the events' owner supplies it). */
  readonly codec: InboundEventCodec<P, C>;
  readonly dispatch: EventDispatch<P, C>;
  readonly deadLetterSink: DeadLetterSink;
  readonly retry: RetryPolicy;
  /** Back-off of retries of a failing dead-letter sink (it is retried until shutdown). */
  readonly sinkRetry?: { readonly baseDelayMs: number; readonly maxDelayMs: number };
  readonly logger: AppLogger;
  readonly metrics: InboundEventsMetrics;
  readonly now?: () => number;
  readonly random?: () => number;
}

export class MessageProcessor<P = unknown, C extends BaseRpcContext = BaseRpcContext> {
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly sinkRetry: { readonly baseDelayMs: number; readonly maxDelayMs: number };

  constructor(private readonly options: MessageProcessorOptions<P, C>) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.sinkRetry = options.sinkRetry ?? { baseDelayMs: 500, maxDelayMs: 30_000 };
  }

  async process(message: InboundMessage, signal: AbortSignal): Promise<ProcessOutcome> {
    const started = this.now();
    const seen: { type?: string } = {};
    const outcome = await this.processOnce(message, signal, seen);
    this.options.metrics.handled(
      seen.type ?? 'undecodable',
      outcome,
      (this.now() - started) / 1000,
    );
    return outcome;
  }

  private async processOnce(
    message: InboundMessage,
    signal: AbortSignal,
    seen: { type?: string },
  ): Promise<ProcessOutcome> {
    const log = this.options.logger;
    const where = { topic: message.topic, partition: message.partition, offset: message.offset };
    let event: DecodedEvent<P>;
    try {
      event = this.options.codec.decode(message);
    } catch (error) {
      const decision = decideFailure(
        error,
        { attempt: 1, firstAttemptAt: this.now(), now: this.now() },
        this.options.retry,
        this.random,
      );
      // The codec throws InvalidJsonError / InvalidEventError; anything else is a bug.
      const reason: DeadLetterReason =
        decision.action === 'dead_letter' ? decision.reason : 'invalid_event';
      return this.deadLetter(message, null, reason, describeError(error), 1, signal);
    }
    seen.type = event.type;

    const about = {
      ...where,
      eventType: event.type,
      eventId: event.eventId,
      traceId: traceIdOfHeader(message.headers.traceparent),
    };
    const firstAttemptAt = this.now();
    // `attempt` counts the tries; `spent` the ones the attempts budget counts (a wait on
    // another worker's attempt is a try that spends none).
    let spent = 0;
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return 'abandoned';
      const started = this.now();
      try {
        await this.options.dispatch(event, this.options.codec.context(message, attempt));
        log.debug(
          { ...about, orderId: event.key, attempt, durationMs: this.now() - started },
          'order event handled',
        );
        return 'succeeded';
      } catch (error) {
        const decision = decideFailure(
          error,
          { attempt: spent + 1, firstAttemptAt, now: this.now() },
          this.options.retry,
          this.random,
        );
        switch (decision.action) {
          case 'dead_letter':
            return this.deadLetter(
              message,
              event,
              decision.reason,
              describeError(error),
              attempt,
              signal,
            );
          case 'retry': {
            if (decision.spendsAttempt) spent++;
            if (signal.aborted) return 'abandoned';
            this.options.metrics.retried(decision.cause);
            const facts = {
              ...about,
              orderId: event.key,
              attempt,
              delayMs: decision.delayMs,
              cause: decision.cause,
              error: describeError(error),
            };
            if (decision.spendsAttempt) {
              log.warn(facts, 'order event failed, retrying this order after a back-off');
            } else {
              log.info(
                facts,
                'order event waits for what ends by itself (another worker, or a late effect of its Payflow call); trying again',
              );
            }
            if (!(await sleepUnlessAborted(decision.delayMs, signal))) return 'abandoned';
            break;
          }
        }
      }
    }
  }

  /** Hands the dead letter to the sink, retrying the sink until it succeeds or shutdown. */
  private async deadLetter(
    message: InboundMessage,
    event: DecodedEvent<P> | null,
    reason: DeadLetterReason,
    error: string,
    attempts: number,
    signal: AbortSignal,
  ): Promise<ProcessOutcome> {
    const orderId = event?.key ?? this.options.codec.keyOfUndecodable(message.key);
    const letter = {
      message,
      reason,
      error,
      attempts,
      orderId,
      eventId: event?.eventId ?? null,
      eventType: event?.type ?? null,
      failedAt: new Date(this.now()),
    };
    const about = {
      topic: message.topic,
      partition: message.partition,
      offset: message.offset,
      orderId,
      eventId: letter.eventId,
      eventType: letter.eventType,
      traceId: traceIdOfHeader(message.headers.traceparent),
      reason,
      attempts,
    };
    for (let sinkAttempt = 1; ; sinkAttempt++) {
      try {
        const outcome = await this.options.deadLetterSink.deadLetter(letter);
        if (outcome === 'already_stored') {
          // Delivered again (a crash or rebalance before the commit): counted and logged
          // when it was stored; the offset is done all the same.
          this.options.logger.debug(about, 'order event already dead-lettered; not counted again');
          return 'dead_lettered';
        }
        this.options.metrics.deadLettered(reason);
        this.options.logger.warn({ ...about, error }, 'order event dead-lettered');
        return 'dead_lettered';
      } catch (sinkError) {
        this.options.logger.error(
          { ...about, sinkAttempt, error: describeError(sinkError) },
          'dead-letter sink failed; retrying it (the offset stays uncommitted)',
        );
        if (signal.aborted) return 'abandoned';
        this.options.metrics.retried('dead_letter_sink');
        const delay = backoffDelayMs(sinkAttempt, this.sinkRetry, this.random);
        if (!(await sleepUnlessAborted(delay, signal))) return 'abandoned';
      }
    }
  }
}
