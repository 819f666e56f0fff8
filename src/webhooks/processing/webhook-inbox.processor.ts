/**
 * Drains the webhook inbox (CONTRACT §5): for each payment with pending rows, fetches the
 * authoritative state (GET paymentStatus) and applies what changed through the status sync,
 * marking the rows processed in the same transaction as the changes and their events. The
 * payload is never trusted: duplicates and out-of-order webhooks make no wrong or repeated
 * event, because only a difference between Payflow's state and Postgres's makes one.
 *
 * Claiming. Due rows (`processed_at IS NULL AND next_attempt_at <= now()`) are claimed with
 * FOR UPDATE SKIP LOCKED and leased (next_attempt_at pushed by `claimLeaseMs`), so several
 * replicas share the work and no transaction stays open across an HTTP call; rows of a
 * worker that died come back when the lease ends.
 *
 * Failures. A transient one (network, 5xx, 429, database) leaves the rows pending with
 * attempts + 1, a bounded exponential back-off and `last_error`; a permanent one (404, any
 * other 4xx) marks them processed with `last_error` and logs it.
 *
 * In doubt. A webhook for a payment whose creation is in doubt proves Payflow created it
 * (its token was bound to the row before the call). The payload's `paymentId` is a hint:
 * it is used only when GET paymentStatus finds it in the payment's organization with the
 * payment's total and currency (and internalRef, when Payflow sends one); then
 * `resolveInDoubt` marks it created (payment.created) and the status change follows. With
 * no usable hint the rows stay pending with a clear `last_error` (see `order show`).
 *
 * Then the snapshot is checked for installments and documents no event of the order explains
 * (UnexplainedEffects: recorded and reported once; it never fails the rows).
 *
 * Tracing. A payment's rows are processed in one span that continues the trace of the
 * latest webhook request carrying a `traceparent`, else the trace of the payment's creation
 * (payments.trace_headers): its Payflow GET and its status events carry that trace.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { BackgroundWorker } from '../../concurrency/background-worker.js';
import { backoffDelayMs } from '../../timing/backoff.js';
import { APP_LOGGER } from '../../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../../logging/logger.js';
import { AppError, describeError } from '../../errors/app-error.js';
import { oneLine } from '../../errors/one-line.js';
import { mapBounded } from '../../concurrency/map-bounded.js';
import { Wakeup } from '../../concurrency/wakeup.js';
import { Database } from '../../database/database.js';
import type { ListenHandle } from '../../database/pg-listener.js';
import { PayflowError } from '../../payflow/payflow.errors.js';
import type { PayflowTraceHeaders } from '../../payflow/payflow-trace.js';
import { OutboxCommitted } from '../../outbox/outbox-committed.js';
import { IN_DOUBT_RESOLVER, type InDoubtResolver } from '../../payments/in-doubt-resolver.port.js';
import type { StatusEvent } from '../../payments/payment-status-events.js';
import { PaymentRepository, type InboxPayment } from '../../payments/payment.repository.js';
import {
  PaymentStatusSync,
  type Snapshot,
} from '../../payments/status-sync/payment-status-sync.js';
import type { StoredPayment } from '../../payments/status-sync/status-changes.js';
import { UnexplainedEffects } from '../../payments/unexplained-effects/unexplained-effects.service.js';
import { WebhookInboxRepository, type ClaimedInboxRow } from '../inbox/webhook-inbox.repository.js';
import { contextFromHeaders, Tracing, type TraceSpan } from '../../tracing/tracing.js';
import { INBOX_WAKEUP, type InboxWakeup } from './inbox-wakeup.js';
import {
  NO_PROCESSING_METRICS,
  WEBHOOK_PROCESSING_METRICS,
  type WebhookProcessingMetrics,
} from './processing.metrics.js';
import { webhookHints } from './webhook-hints.js';
import {
  DEFAULTS,
  WEBHOOK_INBOX_CHANNEL,
  WEBHOOK_PROCESSING_OPTIONS,
  type DrainResult,
  type WebhookProcessingOptions,
} from './webhook-processing.options.js';

const BACKLOG_SAMPLE_MS = 30_000;

type GroupOutcome =
  | { readonly kind: 'processed'; readonly rows: number; readonly events: number }
  | { readonly kind: 'deferred'; readonly rows: number };

/** A failure that leaves the rows pending (with this message) rather than processed. */
class DeferError extends Error {}

/** What the reads of one payment's webhooks pass to Payflow: the stop signal and the webhook's trace. */
interface PayflowRead {
  readonly signal: AbortSignal;
  readonly trace: PayflowTraceHeaders;
}

function isPermanent(error: unknown): boolean {
  return error instanceof AppError && !error.transient;
}

@Injectable()
export class WebhookInboxProcessor extends BackgroundWorker {
  private readonly settings: Required<WebhookProcessingOptions>;
  private readonly wakeup = new Wakeup();
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;
  private listening: ListenHandle | undefined;
  private backlogSampledAt = 0;

  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(PaymentStatusSync) private readonly sync: PaymentStatusSync,
    @Inject(PaymentRepository) private readonly payments: PaymentRepository,
    @Inject(WebhookInboxRepository) private readonly inbox: WebhookInboxRepository,
    @Inject(IN_DOUBT_RESOLVER) private readonly resolver: InDoubtResolver,
    @Inject(UnexplainedEffects) private readonly effects: UnexplainedEffects,
    @Inject(OutboxCommitted) private readonly outboxCommitted: OutboxCommitted,
    @Optional() @Inject(WEBHOOK_PROCESSING_OPTIONS) options?: WebhookProcessingOptions,
    @Optional() @Inject(APP_LOGGER) private readonly logger: AppLogger = silentLogger(),
    @Optional() @Inject(INBOX_WAKEUP) private readonly inboxWakeup?: InboxWakeup,
    @Optional() @Inject(Tracing) private readonly tracing: Tracing = Tracing.off(),
    @Optional()
    @Inject(WEBHOOK_PROCESSING_METRICS)
    private readonly metrics: WebhookProcessingMetrics = NO_PROCESSING_METRICS,
  ) {
    super();
    this.settings = { ...DEFAULTS, ...options };
  }

  protected get autoStart(): boolean {
    return this.settings.autoStart;
  }

  /** Wakes the drain loop (new rows committed). */
  notify(): void {
    this.wakeup.wake();
  }

  start(): void {
    if (this.loop !== null || this.stopped) return;
    this.unsubscribe = this.inboxWakeup?.subscribe(() => this.notify());
    // Rows stored by another replica's receiver: its NOTIFY wakes this loop.
    void this.database
      .listen({
        channel: WEBHOOK_INBOX_CHANNEL,
        onNotify: () => this.notify(),
        onReconnect: () => this.notify(),
      })
      .then((handle) => {
        if (this.stopped) void handle.close();
        else this.listening = handle;
      })
      .catch((error: unknown) => {
        this.logger.warn({ err: describeError(error) }, 'webhook inbox: LISTEN failed; polling');
      });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    await this.listening?.close();
    this.abort.abort();
    this.wakeup.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let full = false;
      try {
        const result = await this.drainOnce();
        full = result.claimed >= this.settings.batchSize;
        failures = 0;
      } catch (error) {
        failures += 1;
        this.logger.error({ err: describeError(error) }, 'webhook inbox: drain failed');
      }
      if (this.stopped) break;
      await this.sampleBacklog();
      if (!full) {
        await this.wakeup.wait(
          failures === 0
            ? this.settings.pollIntervalMs
            : backoffDelayMs(failures, {
                // The house back-off, doubling: twice the poll interval, then 4×, 8×, … ≤ 30 s.
                baseDelayMs: 2 * this.settings.pollIntervalMs,
                maxDelayMs: 30_000,
                jitter: 'none',
              }),
        );
      }
    }
  }

  /** One pass: claims due rows and processes them, payment by payment. */
  async drainOnce(): Promise<DrainResult> {
    const rows = await this.inbox.claim(this.settings.batchSize, this.settings.claimLeaseMs);
    if (rows.length === 0) {
      return { claimed: 0, payments: 0, processed: 0, deferred: 0, events: 0 };
    }
    const groups = new Map<string, ClaimedInboxRow[]>();
    for (const row of rows.sort((a, b) => Number(a.id) - Number(b.id))) {
      const group = groups.get(row.paymentId) ?? [];
      group.push(row);
      groups.set(row.paymentId, group);
    }
    const outcomes = await mapBounded([...groups.entries()], this.settings.concurrency, (entry) =>
      this.processPayment(entry[0], entry[1]),
    );
    let processed = 0;
    let deferred = 0;
    let events = 0;
    for (const outcome of outcomes) {
      if (outcome.kind === 'processed') {
        processed += outcome.rows;
        events += outcome.events;
      } else {
        deferred += outcome.rows;
      }
    }
    if (events > 0) this.outboxCommitted.committed();
    this.metrics.processed('processed', processed);
    this.metrics.processed('deferred', deferred);
    return { claimed: rows.length, payments: groups.size, processed, deferred, events };
  }

  /** The inbox's backlog for the metrics, at most every 30 s (never fails the loop). */
  private async sampleBacklog(): Promise<void> {
    const now = Date.now();
    if (now - this.backlogSampledAt < BACKLOG_SAMPLE_MS) return;
    this.backlogSampledAt = now;
    try {
      const stats = await this.inbox.pendingStats();
      this.metrics.backlog(stats.pending, stats.oldestSeconds);
    } catch (error) {
      this.logger.debug({ err: describeError(error) }, 'webhook inbox: backlog sample failed');
    }
  }

  private async processPayment(paymentId: string, rows: ClaimedInboxRow[]): Promise<GroupOutcome> {
    const ids = rows.map((row) => row.id);
    let span: TraceSpan | undefined;
    try {
      const payment = await this.payments.forInbox(this.database.sql, paymentId);
      if (payment === null) {
        return await this.finish(ids, 'no such payment');
      }
      span = this.processSpan(payment, rows);
      // A signal of its own per payment (many run at once; each request listens to its signal).
      const call: PayflowRead = {
        signal: AbortSignal.any([this.abort.signal]),
        trace: span.headers(),
      };
      let snapshot: Snapshot;
      if (payment.payflowId === null) {
        if (payment.state === 'creation_failed') {
          span.end();
          return await this.finish(ids, 'the payment creation failed; webhook ignored');
        }
        snapshot = await this.resolveInDoubt(payment, rows, call);
      } else {
        snapshot = await this.sync.fetch(
          {
            payflowId: payment.payflowId,
            organizationId: payment.organizationId,
            currency: payment.currency,
          },
          call.signal,
          call.trace,
        );
      }
      const trace = span.headers();
      const terminalRows = rows.filter((row) => row.kind === 'terminal-failure');
      const result = await this.database.transaction(async (tx) => {
        const applied = await this.sync.apply(tx, paymentId, snapshot, {
          source: 'webhook',
          extraEvents: (stored, taken) => terminalFailedEvents(stored, taken, terminalRows),
          trace,
        });
        await this.inbox.markProcessed(
          tx,
          ids,
          applied.outcome === 'missing' ? 'no Payflow id' : null,
        );
        return applied;
      });
      span.end();
      if (result.outcome !== 'missing') {
        await this.effects.check(payment, snapshot.status, 'webhook', span.traceId);
      }
      return { kind: 'processed', rows: ids.length, events: result.events.length };
    } catch (error) {
      span?.end(error);
      const traceId = span?.traceId;
      if (!(error instanceof DeferError) && isPermanent(error)) {
        this.logger.warn(
          { paymentId, inboxIds: ids, traceId, err: describeError(error) },
          'webhook inbox: permanent failure, rows marked processed',
        );
        return this.finish(ids, describeError(error));
      }
      const message = error instanceof DeferError ? error.message : describeError(error);
      this.logger.warn(
        { paymentId, inboxIds: ids, traceId, err: message },
        'webhook inbox: retry later',
      );
      await this.defer(ids, message);
      return { kind: 'deferred', rows: ids.length };
    }
  }

  /**
   * A payment without a Payflow id: verifies the payload's `paymentId` hint against
   * Payflow, resolves the payment and returns the verifying snapshot. Throws DeferError
   * when the rows must wait (no usable hint yet, or the creation is still running).
   */
  private async resolveInDoubt(
    payment: InboxPayment,
    rows: readonly ClaimedInboxRow[],
    call: PayflowRead,
  ): Promise<Snapshot> {
    const hints = [
      ...new Set(
        rows.flatMap((row) => {
          const hint = webhookHints(row.body).paymentId;
          return hint === undefined ? [] : [hint];
        }),
      ),
    ];
    if (hints.length === 0) {
      throw new DeferError(
        `payment creation in doubt (state ${payment.state}) and the webhook names no usable ` +
          'paymentId: resolve it manually',
      );
    }
    const problems: string[] = [];
    for (const hint of hints) {
      let snapshot: Snapshot;
      try {
        snapshot = await this.sync.fetch(
          { payflowId: hint, organizationId: payment.organizationId, currency: payment.currency },
          call.signal,
          call.trace,
        );
      } catch (error) {
        if (error instanceof PayflowError && !error.transient) {
          problems.push(`hint ${hint}: ${describeError(error)}`);
          continue;
        }
        throw error;
      }
      const taken = await this.payments.payflowIdTakenElsewhere(
        this.database.sql,
        hint,
        payment.id,
      );
      const mismatch = taken
        ? 'it belongs to another payment of the bridge'
        : verifyHint(payment, hint, snapshot);
      if (mismatch !== null) {
        problems.push(`hint ${hint}: ${mismatch}`);
        continue;
      }
      const resolved = await this.resolver.resolveInDoubt(payment.id, {
        payflowId: hint,
        installments: snapshot.status.installments,
      });
      if (!resolved) {
        const now = await this.payments.payflowIdOf(this.database.sql, payment.id);
        if (now !== hint) {
          throw new DeferError(
            `payment creation not settled yet (state ${payment.state}); Payflow id ${hint} verified`,
          );
        }
      } else {
        this.logger.info(
          { paymentId: payment.id, orderId: payment.orderId, payflowId: hint },
          'webhook inbox: in-doubt payment resolved by a webhook',
        );
      }
      return snapshot;
    }
    throw new DeferError(
      `payment creation in doubt and no webhook hint could be verified: ${problems.join('; ')}`,
    );
  }

  /**
   * The span of a payment's webhooks: under the latest request's own `traceparent`, else
   * the payment creation's trace, else a new trace.
   */
  private processSpan(payment: InboxPayment, rows: readonly ClaimedInboxRow[]): TraceSpan {
    let parent = payment.traceHeaders;
    for (const row of rows) if (row.trace !== null) parent = row.trace;
    return this.tracing.start(
      'webhook.process',
      contextFromHeaders(parent === null ? undefined : { ...parent }),
      {
        kind: 'consumer',
        attributes: {
          'payment.id': payment.id,
          'order.id': payment.orderId,
          'webhook.rows': rows.length,
        },
      },
    );
  }

  private async finish(ids: readonly string[], error: string): Promise<GroupOutcome> {
    await this.database.transaction((tx) => this.inbox.markProcessed(tx, ids, oneLine(error)));
    return { kind: 'processed', rows: ids.length, events: 0 };
  }

  private async defer(ids: readonly string[], error: string): Promise<void> {
    try {
      await this.inbox.defer(
        ids,
        oneLine(error),
        this.settings.retryBaseMs,
        this.settings.retryMaxMs,
      );
    } catch (failure) {
      // The claim lease brings the rows back anyway.
      this.logger.error({ err: describeError(failure) }, 'webhook inbox: cannot defer rows');
    }
  }
}

/** Why a hinted Payflow payment is not this one, or null when it matches. */
export function verifyHint(payment: InboxPayment, hint: string, snapshot: Snapshot): string | null {
  const status = snapshot.status;
  if (status.paymentId !== hint) return `Payflow answered for payment ${status.paymentId}`;
  const internalRef: unknown = Reflect.get(status.raw, 'internalRef');
  if (typeof internalRef === 'string' && internalRef !== payment.orderId) {
    return 'its internalRef is another order';
  }
  if (status.currency !== payment.currency) return 'its currency differs';
  if (status.totalAmountMinor !== payment.totalGrossMinor) return 'its total differs';
  return null;
}

function terminalFailedEvents(
  payment: StoredPayment,
  snapshot: Snapshot,
  rows: readonly ClaimedInboxRow[],
): StatusEvent[] {
  return rows.map((row) => {
    const hints = webhookHints(row.body);
    return {
      type: 'payment.terminal_failed',
      orderId: payment.orderId,
      organizationId: payment.organizationId,
      paymentId: payment.payflowId,
      data: {
        providerStatus: snapshot.status.status,
        ...(hints.terminalId === undefined ? {} : { terminalId: hints.terminalId }),
        ...(hints.reason === undefined ? {} : { reason: hints.reason }),
        source: 'webhook',
      },
    };
  });
}
