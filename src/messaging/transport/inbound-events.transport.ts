/**
 * The Nest transport of ERP order events (CONTRACT §2), replacing @nestjs/microservices'
 * ServerKafka: handlers stay `@EventPattern('order.payment_requested')` methods, but the
 * transport owns delivery (see delivery-engine.ts for concurrency, back-pressure, commits
 * and rebalances, message-processor.ts for parsing, retries and dead letters, and
 * failure-policy.ts for the retry / dead-letter decision).
 *
 * The events' owner injects the codec (INBOUND_EVENT_CODEC, messaging.ports.ts) that reads a
 * message into an event and builds the handler's context; this folder knows no event type.
 * Handlers get the decoded payload (the order envelope) and the codec's context. They must
 * be installed with OrderEventExceptionFilter (see kafka/inbound-events.wiring.ts): Nest's default
 * RPC exception filter replaces every error with `{ status: 'error', message }`, which
 * would hide the error class the failure policy decides by.
 *
 * Crashes are latched: once the consumer stopped for good (kafkajs CRASH without restart)
 * or got stuck (no sign of life for `stuckAfterMs`, see `liveness()`), the transport stays
 * `crashed`, and a `crash` listener registered later is still called (once), so a crash
 * during start-up cannot go unnoticed.
 *
 * Shutdown: call `drain()` before Nest tears the modules down (the transport implements
 * `beforeApplicationShutdown`, so as a Nest provider it is called for you); `close()`
 * drains too and is idempotent.
 *
 * Only the public API of Nest's `Server` is used, none of its protected state: handlers come
 * from `getHandlers()`, the status observable (`status`, what `microservice.status` shows)
 * is fed from this class's own subject, and processing hooks installed through
 * `setOnProcessingStartHook` / `setOnProcessingEndHook` (instrumentation) are kept here and
 * called around each handler call by `dispatch`.
 */
import type { BeforeApplicationShutdown } from '@nestjs/common';
import { Server, type BaseRpcContext, type CustomTransportStrategy } from '@nestjs/microservices';
import { EventEmitter } from 'node:events';
import {
  distinctUntilChanged,
  isObservable,
  lastValueFrom,
  ReplaySubject,
  type Observable,
} from 'rxjs';
import { AppError, describeError } from '../../errors/app-error.js';
import type { AppLogger } from '../../logging/logger.js';
import type { TopicPartition } from './consumer.port.js';
import { DeliveryEngine, type EngineStats } from './delivery-engine.js';
import { assertHandlerRegistry } from './handler-registry.js';
import { MessageProcessor } from './message-processor.js';
import type { DecodedEvent } from '../messaging.ports.js';
import type { InboundEventsTransportOptions } from './inbound-events.options.js';
import { DEFAULT_RETRY_POLICY } from './retry-policy.js';
import { NO_METRICS } from './transport.metrics.js';

export type { InboundEventsTransportOptions } from './inbound-events.options.js';

/** transportId of this transport (handlers declared for another transport are skipped). */
export const ORDER_EVENTS_TRANSPORT = Symbol('ORDER_EVENTS_TRANSPORT');

/** The consumer showed no sign of life for `stuckAfterMs`: it is treated as crashed. */
export class ConsumerStuckError extends AppError {
  readonly code = 'KAFKA.CONSUMER_STUCK';
  readonly transient = false;
}

/** What /health/live reports about the order consumer. */
export interface InboundEventsLiveness {
  readonly alive: boolean;
  readonly status: InboundEventsTransportStatus;
  /** Milliseconds since the consumer's last sign of life. */
  readonly sinceProgressMs: number;
  /** Why it is not alive (the crash's code or message). */
  readonly reason?: string;
}

export type InboundEventsTransportStatus =
  'idle' | 'connecting' | 'connected' | 'draining' | 'closed' | 'crashed';

export type InboundEventsTransportEvents = {
  /** The Kafka client stopped for good; the process should be restarted. */
  crash: (error: Error) => void;
  /** This member's partitions after a (re)join. */
  assignment: (partitions: readonly TopicPartition[]) => void;
};

export interface InboundEventsTransportStats extends EngineStats {
  readonly status: InboundEventsTransportStatus;
}

/** What Nest's default RPC exception filter leaves of an error. */
export class HandlerErrorHiddenError extends Error {
  constructor() {
    super(
      'the handler failed, but an exception filter replaced its error (install OrderEventExceptionFilter)',
    );
    this.name = 'HandlerErrorHiddenError';
  }
}

/** What Nest's public `setOnProcessingStartHook` / `setOnProcessingEndHook` take. */
type ProcessingStartHook = Parameters<Server['setOnProcessingStartHook']>[0];
type ProcessingEndHook = Parameters<Server['setOnProcessingEndHook']>[0];

/** Runs the handler call at once: what Nest's Server does while no start hook is set. */
const runAtOnce: ProcessingStartHook = (_transportId, _context, done) => {
  void done();
};

function isNestErrorPayload(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !(value instanceof Error) &&
    (value as { status?: unknown }).status === 'error'
  );
}

export class InboundEventsTransport
  extends Server<InboundEventsTransportEvents, InboundEventsTransportStatus>
  implements CustomTransportStrategy, BeforeApplicationShutdown
{
  override transportId = ORDER_EVENTS_TRANSPORT;
  private readonly events = new EventEmitter();
  private readonly log: AppLogger;
  private readonly engine: DeliveryEngine;
  private state: InboundEventsTransportStatus = 'idle';
  /** Every status the transport enters, for `status`; replays the current one. */
  private readonly statusChanges = new ReplaySubject<InboundEventsTransportStatus>(1);
  private processingStart: ProcessingStartHook = runAtOnce;
  private processingEnd: ProcessingEndHook | undefined;
  private starting: Promise<void> | undefined;
  private draining: Promise<void> | undefined;
  private warnedHiddenError = false;
  private crashError: Error | undefined;
  private readonly crashed: Promise<void>;
  private signalCrashed: () => void = () => undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private readonly stuckAfterMs: number;
  private readonly unreachableAfterMs: number;

  constructor(private readonly options: InboundEventsTransportOptions) {
    super();
    this.log = options.logger;
    this.stuckAfterMs = options.stuckAfterMs ?? 120_000;
    this.unreachableAfterMs = options.unreachableAfterMs ?? 10_000;
    this.crashed = new Promise<void>((resolve) => {
      this.signalCrashed = resolve;
    });
    const metrics = options.metrics ?? NO_METRICS;
    const processor = new MessageProcessor({
      codec: options.codec,
      dispatch: (event, context) => this.dispatch(event, context),
      deadLetterSink: options.deadLetterSink,
      retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
      ...(options.sinkRetry === undefined ? {} : { sinkRetry: options.sinkRetry }),
      logger: options.logger,
      metrics,
      ...(options.random === undefined ? {} : { random: options.random }),
    });
    this.engine = new DeliveryEngine({
      consumer: options.consumer,
      topic: options.topic,
      process: (message, signal) => processor.process(message, signal),
      maxInFlight: options.maxInFlight ?? 256,
      ...(options.maxInFlightBytes === undefined
        ? {}
        : { maxInFlightBytes: options.maxInFlightBytes }),
      sequencing: options.sequencing ?? 'key',
      commitIntervalMs: options.commitIntervalMs ?? 200,
      commitEveryCompletions: options.commitEveryCompletions ?? 500,
      fromBeginning: options.fromBeginning ?? true,
      logger: options.logger,
      metrics,
      onFatal: (error) => this.crash(error),
      onAssignment: (partitions) => this.events.emit('assignment', partitions),
    });
    this.setStatus('idle');
  }

  /**
   * Nest calls this from `listen()` / `startAllMicroservices()`. Checks the handler
   * registry first and refuses to start when it is incomplete.
   */
  listen(callback: (...optionalParams: unknown[]) => unknown): void {
    this.starting ??= this.start();
    this.starting.then(
      () => {
        callback();
      },
      (error: unknown) => {
        callback(error);
      },
    );
  }

  /** Graceful stop (idempotent): see DeliveryEngine.stop. */
  drain(): Promise<void> {
    this.draining ??= this.stop();
    return this.draining;
  }

  /** Nest calls this when the microservice closes; drains first if nobody did. */
  close(): Promise<void> {
    return this.drain();
  }

  /** Nest lifecycle hook, when the transport is also a provider (InboundEventsTransportModule). */
  beforeApplicationShutdown(): Promise<void> {
    return this.drain();
  }

  on<
    EventKey extends keyof InboundEventsTransportEvents = keyof InboundEventsTransportEvents,
    EventCallback extends InboundEventsTransportEvents[EventKey] =
      InboundEventsTransportEvents[EventKey],
  >(event: EventKey, callback: EventCallback): () => void {
    const listener = callback as unknown as (...args: unknown[]) => void;
    this.events.on(event, listener);
    const latched = this.crashError;
    if (event === 'crash' && latched !== undefined) {
      // Crashed before this listener came (e.g. while starting): it still hears it, once.
      queueMicrotask(() => {
        if (this.events.listeners(event).includes(listener)) listener(latched);
      });
    }
    return () => {
      this.events.off(event, listener);
    };
  }

  /** The PartitionConsumer (KafkaPartitionConsumer has `.client`, the kafkajs consumer). */
  unwrap<T>(): T {
    return this.options.consumer as unknown as T;
  }

  get currentStatus(): InboundEventsTransportStatus {
    return this.state;
  }

  /** The status changes, starting with the current status (Nest's `microservice.status`). */
  override get status(): Observable<InboundEventsTransportStatus> {
    return this.statusChanges.asObservable().pipe(distinctUntilChanged());
  }

  /** Instrumentation's hook around each handler call: it must call `done` once. */
  override setOnProcessingStartHook(hook: ProcessingStartHook): void {
    this.processingStart = hook;
  }

  /** Instrumentation's hook after each handler call (once, also when the handler failed). */
  override setOnProcessingEndHook(hook: ProcessingEndHook): void {
    this.processingEnd = hook;
  }

  stats(): InboundEventsTransportStats {
    return { status: this.state, ...this.engine.stats() };
  }

  /**
   * For /health/live: not alive once crashed, or when the consumer has been starting or
   * consuming without a sign of life for `stuckAfterMs` (it is then crashed here, so the
   * crash listeners run and the process exits). Draining and closed count as alive: the
   * process is on its way out by itself.
   */
  liveness(now = Date.now()): InboundEventsLiveness {
    const sinceProgressMs = this.engine.progressAgeMs(now);
    if (
      this.crashError === undefined &&
      (this.state === 'connecting' || this.state === 'connected') &&
      sinceProgressMs > this.stuckAfterMs
    ) {
      const stuck = new ConsumerStuckError(
        `the order consumer showed no sign of life for ${sinceProgressMs} ms (limit ${this.stuckAfterMs} ms)`,
        { metadata: { sinceProgressMs, stuckAfterMs: this.stuckAfterMs, status: this.state } },
      );
      this.log.error({ error: describeError(stuck) }, 'order events: consumer stuck');
      this.crash(stuck);
    }
    const error = this.crashError;
    return error === undefined
      ? { alive: true, status: this.state, sinceProgressMs }
      : {
          alive: false,
          status: this.state,
          sinceProgressMs,
          reason: error instanceof AppError ? error.code : error.message,
        };
  }

  /**
   * For /health/ready: connected, and Kafka answered lately (a sign of life within
   * `unreachableAfterMs`). A whole cluster down shows here within that time, while liveness
   * stays fine until `stuckAfterMs`: kafkajs reconnects by itself when Kafka is back.
   */
  readiness(now = Date.now()): {
    readonly ready: boolean;
    readonly status: string;
    readonly sinceProgressMs: number;
  } {
    const sinceProgressMs = this.engine.progressAgeMs(now);
    if (this.state !== 'connected') return { ready: false, status: this.state, sinceProgressMs };
    return sinceProgressMs > this.unreachableAfterMs
      ? { ready: false, status: 'kafka unreachable', sinceProgressMs }
      : { ready: true, status: this.state, sinceProgressMs };
  }

  /** Latches the first crash, marks the transport crashed and tells the listeners. */
  private crash(error: Error): void {
    if (this.crashError !== undefined) return;
    this.crashError = error;
    this.stopWatchdog();
    this.setStatus('crashed');
    this.signalCrashed();
    this.events.emit('crash', error);
  }

  private startWatchdog(): void {
    const every = Math.max(50, Math.min(5_000, Math.floor(this.stuckAfterMs / 4)));
    this.watchdog = setInterval(() => this.liveness(), every);
    this.watchdog.unref();
  }

  private stopWatchdog(): void {
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  private async start(): Promise<void> {
    assertHandlerRegistry(this.getHandlers(), this.options.codec.eventTypes);
    if (this.draining !== undefined) throw new Error('the order-events transport was closed');
    this.setStatus('connecting');
    this.startWatchdog();
    try {
      // A crash (latched, listeners told) ends the start too: the worker starts, and its
      // crash listener, registered afterwards, runs at once.
      await Promise.race([this.engine.start(), this.crashed]);
    } catch (error) {
      this.stopWatchdog();
      this.log.error({ error: describeError(error) }, 'order events: failed to start');
      this.crash(error instanceof Error ? error : new Error(String(error)));
      await this.options.consumer.disconnect().catch(() => undefined);
      throw error;
    }
    if (this.crashError !== undefined) return;
    if (this.state === 'connecting') this.setStatus('connected');
    this.log.info(
      { topic: this.options.topic, handlers: this.getHandlers().size },
      'order events: consuming',
    );
  }

  private async stop(): Promise<void> {
    if (this.starting === undefined) {
      this.setStatus('closed');
      return;
    }
    const started = await this.starting.then(
      () => true,
      () => false,
    );
    if (!started) {
      this.setStatus('closed');
      return;
    }
    this.stopWatchdog();
    if (this.state !== 'crashed') this.setStatus('draining');
    const report = await this.engine.stop({
      drainTimeoutMs: this.options.drainTimeoutMs ?? 20_000,
      commitTimeoutMs: this.options.closeStepTimeoutMs ?? 4_000,
    });
    this.setStatus('closed');
    this.log.info(
      {
        unfinished: report.unfinished,
        abandoned: report.abandoned,
        committed: report.committed.map((o) => `${o.partition}@${o.offset}`),
      },
      'order events: stopped',
    );
  }

  /**
   * Runs the event's handler (the @EventPattern method, as Nest registered it) between the
   * processing hooks, and waits for its result, also when it is a stream.
   */
  private async dispatch(event: DecodedEvent, context: BaseRpcContext): Promise<void> {
    const handler = this.getHandlers().get(event.type);
    if (handler === undefined) throw new Error(`no handler registered for ${event.type}`);
    const outcome = await new Promise<{ failed: boolean; error?: unknown }>((resolve) => {
      this.processingStart(ORDER_EVENTS_TRANSPORT, context, async () => {
        try {
          const result: unknown = await handler(event.payload, context);
          if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
          resolve({ failed: false });
        } catch (error) {
          resolve({ failed: true, error });
        } finally {
          this.processingEnd?.(ORDER_EVENTS_TRANSPORT, context);
        }
      });
    });
    if (outcome.failed) throw this.revealError(outcome.error);
  }

  private revealError(error: unknown): unknown {
    if (!isNestErrorPayload(error)) return error;
    if (!this.warnedHiddenError) {
      this.warnedHiddenError = true;
      this.log.error(
        'order events: handler errors reach the transport without their class; install OrderEventExceptionFilter (see kafka/inbound-events.wiring.ts). Until then every failure is retried as unknown.',
      );
    }
    return new HandlerErrorHiddenError();
  }

  private setStatus(status: InboundEventsTransportStatus): void {
    this.state = status;
    this.statusChanges.next(status);
  }
}
