/**
 * Drains the webhook inbox (CONTRACT §5): claims due rows and processes them payment by
 * payment, a few payments at once (PaymentWebhooks, payment-webhooks.ts: fetch the
 * authoritative state, apply what changed through the status sync, mark the rows processed
 * in the same transaction as the changes and their events). The payload is never trusted:
 * duplicates and out-of-order webhooks make no wrong or repeated event, because only a
 * difference between Payflow's state and Postgres's makes one. This file holds the loop:
 * when it drains (wake-ups, polls, its own back-off after a failed pass) and what it counts.
 *
 * Claiming. Due rows (`processed_at IS NULL AND next_attempt_at <= now()`) are claimed with
 * FOR UPDATE SKIP LOCKED and leased (next_attempt_at pushed by `claimLeaseMs`), so several
 * replicas share the work and no transaction stays open across an HTTP call; rows of a
 * worker that died come back when the lease ends.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { BackgroundWorker } from '../../concurrency/background-worker.js';
import { backoffDelayMs } from '../../timing/backoff.js';
import { APP_LOGGER } from '../../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../../logging/logger.js';
import { describeError } from '../../errors/app-error.js';
import { mapBounded } from '../../concurrency/map-bounded.js';
import { Wakeup } from '../../concurrency/wakeup.js';
import { Database } from '../../database/database.js';
import type { ListenHandle } from '../../database/pg-listener.js';
import { OutboxCommitted } from '../../outbox/outbox-committed.js';
import { IN_DOUBT_RESOLVER, type InDoubtResolver } from '../../payments/in-doubt-resolver.port.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { PaymentStatusSync } from '../../payments/status-sync/payment-status-sync.js';
import { UnexplainedEffects } from '../../payments/unexplained-effects/unexplained-effects.service.js';
import { WebhookInboxRepository, type ClaimedInboxRow } from '../inbox/webhook-inbox.repository.js';
import { Tracing } from '../../tracing/tracing.js';
import { INBOX_WAKEUP, type InboxWakeup } from './inbox-wakeup.js';
import { PaymentWebhooks } from './payment-webhooks.js';
import {
  NO_PROCESSING_METRICS,
  WEBHOOK_PROCESSING_METRICS,
  type WebhookProcessingMetrics,
} from './processing.metrics.js';
import {
  DEFAULTS,
  WEBHOOK_INBOX_CHANNEL,
  WEBHOOK_PROCESSING_OPTIONS,
  type DrainResult,
  type WebhookProcessingOptions,
} from './webhook-processing.options.js';

const BACKLOG_SAMPLE_MS = 30_000;

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
  private readonly paymentWebhooks: PaymentWebhooks;

  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(PaymentStatusSync) sync: PaymentStatusSync,
    @Inject(PaymentRepository) payments: PaymentRepository,
    @Inject(WebhookInboxRepository) private readonly inbox: WebhookInboxRepository,
    @Inject(IN_DOUBT_RESOLVER) resolver: InDoubtResolver,
    @Inject(UnexplainedEffects) effects: UnexplainedEffects,
    @Inject(OutboxCommitted) private readonly outboxCommitted: OutboxCommitted,
    @Optional() @Inject(WEBHOOK_PROCESSING_OPTIONS) options?: WebhookProcessingOptions,
    @Optional() @Inject(APP_LOGGER) private readonly logger: AppLogger = silentLogger(),
    @Optional() @Inject(INBOX_WAKEUP) private readonly inboxWakeup?: InboxWakeup,
    @Optional() @Inject(Tracing) tracing: Tracing = Tracing.off(),
    @Optional()
    @Inject(WEBHOOK_PROCESSING_METRICS)
    private readonly metrics: WebhookProcessingMetrics = NO_PROCESSING_METRICS,
  ) {
    super();
    this.settings = { ...DEFAULTS, ...options };
    this.paymentWebhooks = new PaymentWebhooks({
      database,
      sync,
      payments,
      inbox,
      resolver,
      effects,
      tracing,
      logger,
      stop: this.abort.signal,
      retryBaseMs: this.settings.retryBaseMs,
      retryMaxMs: this.settings.retryMaxMs,
    });
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
      this.paymentWebhooks.process(entry[0], entry[1]),
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
}
