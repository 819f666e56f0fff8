/**
 * The steps of processing one payment's claimed webhooks: fetch the authoritative state
 * (GET paymentStatus), apply what changed through the status sync and mark the rows
 * processed in the same transaction as the changes and their events, then check the
 * snapshot for installments and documents no event of the order explains
 * (UnexplainedEffects: recorded and reported once; it never fails the rows). A payment in
 * doubt is settled from the webhook's hint first (in-doubt-hints.ts).
 *
 * Failures. A transient one (network, 5xx, 429, database) leaves the rows pending with
 * attempts + 1, the house's doubling back-off (`retryBaseMs` for the first retry, at most
 * `retryMaxMs`) and `last_error`; a permanent one (404, any other 4xx) marks them processed
 * with `last_error` and logs it.
 *
 * Tracing. A payment's rows are processed in one span that continues the trace of the
 * latest webhook request carrying a `traceparent`, else the trace of the payment's creation
 * (payments.trace_headers): its Payflow GET and its status events carry that trace.
 */
import type { AppLogger } from '../../logging/logger.js';
import { AppError, describeError } from '../../errors/app-error.js';
import { oneLine } from '../../errors/one-line.js';
import { backoffDelayMs, type BackoffPolicy } from '../../timing/backoff.js';
import type { Database } from '../../database/database.js';
import type { InDoubtResolver } from '../../payments/in-doubt-resolver.port.js';
import type { StatusEvent } from '../../payments/payment-status-events.js';
import type { InboxPayment, PaymentRepository } from '../../payments/payment.repository.js';
import type {
  PaymentStatusSync,
  Snapshot,
} from '../../payments/status-sync/payment-status-sync.js';
import type { StoredPayment } from '../../payments/status-sync/status-changes.js';
import type { UnexplainedEffects } from '../../payments/unexplained-effects/unexplained-effects.service.js';
import { contextFromHeaders, type Tracing, type TraceSpan } from '../../tracing/tracing.js';
import type { ClaimedInboxRow, WebhookInboxRepository } from '../inbox/webhook-inbox.repository.js';
import { DeferError, InDoubtHints, type PayflowRead } from './in-doubt-hints.js';
import { webhookHints } from './webhook-hints.js';

export type GroupOutcome =
  | { readonly kind: 'processed'; readonly rows: number; readonly events: number }
  | { readonly kind: 'deferred'; readonly rows: number };

export interface PaymentWebhooksOptions {
  readonly database: Database;
  readonly sync: PaymentStatusSync;
  readonly payments: PaymentRepository;
  readonly inbox: WebhookInboxRepository;
  readonly resolver: InDoubtResolver;
  readonly effects: UnexplainedEffects;
  readonly tracing: Tracing;
  readonly logger: AppLogger;
  /** The processor's stop: aborts the Payflow reads in flight. */
  readonly stop: AbortSignal;
  /** Delay before a deferred row's first retry, doubled per attempt. */
  readonly retryBaseMs: number;
  /** Longest delay before a deferred row's retry. */
  readonly retryMaxMs: number;
}

function isPermanent(error: unknown): boolean {
  return error instanceof AppError && !error.transient;
}

export class PaymentWebhooks {
  private readonly inDoubt: InDoubtHints;
  private readonly retry: BackoffPolicy;

  constructor(private readonly options: PaymentWebhooksOptions) {
    this.inDoubt = new InDoubtHints(options);
    // Plain doubling, no jitter: the delays the inbox has always used (retryBaseMs, 2×, 4×, …).
    this.retry = {
      baseDelayMs: options.retryBaseMs,
      maxDelayMs: options.retryMaxMs,
      jitter: 'none',
    };
  }

  /** Processes the claimed rows of one payment (in id order); never throws. */
  async process(paymentId: string, rows: ClaimedInboxRow[]): Promise<GroupOutcome> {
    const { database, sync, payments, inbox, effects, logger } = this.options;
    const ids = rows.map((row) => row.id);
    let span: TraceSpan | undefined;
    try {
      const payment = await payments.forInbox(database.sql, paymentId);
      if (payment === null) {
        return await this.finish(ids, 'no such payment');
      }
      span = this.processSpan(payment, rows);
      // A signal of its own per payment (many run at once; each request listens to its signal).
      const call: PayflowRead = {
        signal: AbortSignal.any([this.options.stop]),
        trace: span.headers(),
      };
      let snapshot: Snapshot;
      if (payment.payflowId === null) {
        if (payment.state === 'creation_failed') {
          span.end();
          return await this.finish(ids, 'the payment creation failed; webhook ignored');
        }
        snapshot = await this.inDoubt.resolve(payment, rows, call);
      } else {
        snapshot = await sync.fetch(
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
      const result = await database.transaction(async (tx) => {
        const applied = await sync.apply(tx, paymentId, snapshot, {
          source: 'webhook',
          extraEvents: (stored, taken) => terminalFailedEvents(stored, taken, terminalRows),
          trace,
        });
        await inbox.markProcessed(tx, ids, applied.outcome === 'missing' ? 'no Payflow id' : null);
        return applied;
      });
      span.end();
      if (result.outcome !== 'missing') {
        await effects.check(payment, snapshot.status, 'webhook', span.traceId);
      }
      return { kind: 'processed', rows: ids.length, events: result.events.length };
    } catch (error) {
      span?.end(error);
      const traceId = span?.traceId;
      if (!(error instanceof DeferError) && isPermanent(error)) {
        logger.warn(
          { paymentId, inboxIds: ids, traceId, err: describeError(error) },
          'webhook inbox: permanent failure, rows marked processed',
        );
        return this.finish(ids, describeError(error));
      }
      const message = error instanceof DeferError ? error.message : describeError(error);
      logger.warn(
        { paymentId, inboxIds: ids, traceId, err: message },
        'webhook inbox: retry later',
      );
      await this.defer(rows, message);
      return { kind: 'deferred', rows: ids.length };
    }
  }

  /**
   * The span of a payment's webhooks: under the latest request's own `traceparent`, else
   * the payment creation's trace, else a new trace.
   */
  private processSpan(payment: InboxPayment, rows: readonly ClaimedInboxRow[]): TraceSpan {
    let parent = payment.traceHeaders;
    for (const row of rows) if (row.trace !== null) parent = row.trace;
    return this.options.tracing.start(
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
    const { database, inbox } = this.options;
    await database.transaction((tx) => inbox.markProcessed(tx, ids, oneLine(error)));
    return { kind: 'processed', rows: ids.length, events: 0 };
  }

  /** The rows stay pending; each waits by its own attempts (rows of a payment may differ). */
  private async defer(rows: readonly ClaimedInboxRow[], error: string): Promise<void> {
    const retries = rows.map((row) => ({
      id: row.id,
      // This failure is the row's attempt `attempts + 1`: the first waits `retryBaseMs`.
      delayMs: backoffDelayMs(row.attempts + 1, this.retry),
    }));
    try {
      await this.options.inbox.defer(retries, oneLine(error));
    } catch (failure) {
      // The claim lease brings the rows back anyway.
      this.options.logger.error(
        { err: describeError(failure) },
        'webhook inbox: cannot defer rows',
      );
    }
  }
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
