/**
 * Reconciliation (issue 4 §3): webhooks are optional, may be skipped (a callback domain
 * that is not whitelisted) or given up after 25 retries, so every open payment is also
 * polled. A pass fetches paymentStatus for each payment that has a Payflow id and is not
 * in a final status (payments in doubt need a webhook or an operator), at a bounded rate,
 * and applies what changed through the status sync with source `poll` (which records
 * `last_polled_at`). Each page's answers are then checked, with one statement, for
 * installments and documents that no event of their order explains (UnexplainedEffects).
 *
 * One pass at a time in a group of replicas: a pass holds a session advisory lock
 * (pg_try_advisory_lock) on a dedicated connection; a replica that finds it taken skips
 * its turn. The loop (setTimeout) starts on application bootstrap and stops on shutdown.
 * An idle worker pays three statements a pass (lock, one page, unlock): every 5 min.
 *
 * Metrics (ReconciliationMetrics): every poll by outcome, and the open payments each pass
 * watched.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { BackgroundWorker } from '../concurrency/background-worker.js';
import { APP_LOGGER } from '../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../logging/logger.js';
import { describeError } from '../errors/app-error.js';
import { Database } from '../database/database.js';
import { mapBounded } from '../concurrency/map-bounded.js';
import { sleep } from '../timing/sleep.js';
import { OutboxCommitted } from '../outbox/outbox-committed.js';
import { PaymentRepository } from '../payments/payment.repository.js';
import { FINAL_PAYMENT_STATUSES } from '../payments/status-sync/final-status.js';
import { PaymentStatusSync } from '../payments/status-sync/payment-status-sync.js';
import {
  UnexplainedEffects,
  type PaymentRead,
} from '../payments/unexplained-effects/unexplained-effects.service.js';

export const RECONCILIATION_OPTIONS = Symbol('RECONCILIATION_OPTIONS');

export const RECONCILIATION_METRICS = Symbol('RECONCILIATION_METRICS');

/** How one payment's poll ended. */
export type PollOutcome = 'unchanged' | 'changed' | 'stale' | 'failed';

/** What the poller reports to monitoring (the worker's prom-client registry). */
export interface ReconciliationMetrics {
  /** One GET paymentStatus of a pass, by outcome. */
  polled(outcome: PollOutcome): void;
  /** A pass that ran: how many open payments it watched. */
  passDone(result: PassResult): void;
}

/** pg_try_advisory_lock(namespace, key) of the reconciliation pass. */
export const RECONCILIATION_LOCK = { namespace: 0x72636e01, key: 1 } as const;

export interface ReconciliationOptions {
  /** Run passes with the application. Default true. */
  readonly autoStart?: boolean;
  /** Pause between the end of a pass and the next. Default 300 000 ms (5 min). */
  readonly intervalMs?: number;
  /** Delay of the first pass after start-up. Default 30 000 ms. */
  readonly initialDelayMs?: number;
  /** Most GET paymentStatus calls started per second. Default 20. */
  readonly ratePerSecond?: number;
  /** GETs in flight at once. Default 4. */
  readonly concurrency?: number;
  /** Payments read per page. Default 500. */
  readonly pageSize?: number;
}

const DEFAULTS: Required<ReconciliationOptions> = {
  autoStart: true,
  intervalMs: 300_000,
  initialDelayMs: 30_000,
  ratePerSecond: 20,
  concurrency: 4,
  pageSize: 500,
};

/** One payment whose status a pass changed. */
export interface ReconciledChange {
  readonly orderId: string;
  readonly paymentId: string;
  readonly payflowId: string;
  readonly previousProviderStatus: string | null;
  readonly providerStatus: string;
  readonly status: string;
  readonly installmentChanges: number;
  readonly events: number;
}

export interface ReconciliationFailure {
  readonly orderId: string;
  readonly paymentId: string;
  readonly payflowId: string;
  readonly error: string;
}

export interface PassResult {
  /** False when another pass held the lock (nothing was done). */
  readonly ran: boolean;
  readonly checked: number;
  readonly unchanged: number;
  /** Snapshots refused because a newer one was applied meanwhile. */
  readonly stale: number;
  readonly changed: readonly ReconciledChange[];
  readonly failed: readonly ReconciliationFailure[];
  readonly events: number;
  /** Effects at Payflow no event explains that this pass recorded for the first time. */
  readonly unexplained: number;
  readonly durationMs: number;
}

/** Spaces call starts `1000 / rate` ms apart (shared by the pass's workers). */
class RateGate {
  private next = 0;
  constructor(private readonly intervalMs: number) {}
  async take(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.next);
    this.next = at + this.intervalMs;
    if (at > now) await sleep(at - now);
  }
}

@Injectable()
export class ReconciliationPoller extends BackgroundWorker {
  private readonly settings: Required<ReconciliationOptions>;
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<unknown> | null = null;
  private stopped = false;
  /** The one read reconciliation makes: the payments still open at Payflow, page by page. */
  private readonly payments = new PaymentRepository();

  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(PaymentStatusSync) private readonly sync: PaymentStatusSync,
    @Inject(UnexplainedEffects) private readonly effects: UnexplainedEffects,
    @Inject(OutboxCommitted) private readonly outboxCommitted: OutboxCommitted,
    @Optional() @Inject(RECONCILIATION_OPTIONS) options?: ReconciliationOptions,
    @Optional() @Inject(APP_LOGGER) private readonly logger: AppLogger = silentLogger(),
    @Optional() @Inject(RECONCILIATION_METRICS) private readonly metrics?: ReconciliationMetrics,
  ) {
    super();
    this.settings = { ...DEFAULTS, ...options };
  }

  protected get autoStart(): boolean {
    return this.settings.autoStart;
  }

  start(): void {
    if (this.stopped || this.timer !== null) return;
    this.schedule(this.settings.initialDelayMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.abort.abort();
    await this.current?.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const pass = this.runPass()
        .then((result) => {
          if (result.ran) this.metrics?.passDone(result);
          const found = result.changed.length + result.failed.length + result.unexplained;
          if (result.ran && found > 0) {
            this.logger.info(
              {
                checked: result.checked,
                changed: result.changed.length,
                failed: result.failed.length,
                unexplained: result.unexplained,
                durationMs: result.durationMs,
              },
              'reconciliation pass done',
            );
          }
        })
        .catch((error: unknown) => {
          this.logger.error({ err: describeError(error) }, 'reconciliation pass failed');
        })
        .finally(() => {
          this.current = null;
          this.schedule(this.settings.intervalMs);
        });
      this.current = pass;
    }, delayMs);
  }

  /** One pass over every open payment; `ran: false` when another pass holds the lock. */
  async runPass(signal: AbortSignal = this.abort.signal): Promise<PassResult> {
    const started = Date.now();
    const held = await this.database.whileHolding(RECONCILIATION_LOCK, () =>
      this.pass(signal, started),
    );
    return (
      held?.value ?? {
        ran: false,
        checked: 0,
        unchanged: 0,
        stale: 0,
        changed: [],
        failed: [],
        events: 0,
        unexplained: 0,
        durationMs: Date.now() - started,
      }
    );
  }

  private async pass(signal: AbortSignal, started: number): Promise<PassResult> {
    const gate = new RateGate(1000 / Math.max(0.001, this.settings.ratePerSecond));
    const changed: ReconciledChange[] = [];
    const failed: ReconciliationFailure[] = [];
    let checked = 0;
    let unchanged = 0;
    let stale = 0;
    let events = 0;
    let unexplained = 0;
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      if (signal.aborted) break;
      const page = await this.payments.openPage(
        this.database.sql,
        FINAL_PAYMENT_STATUSES,
        after,
        this.settings.pageSize,
      );
      if (page.length === 0) break;
      after = page[page.length - 1]!.id;
      const reads: PaymentRead[] = [];
      await mapBounded(page, this.settings.concurrency, async (payment) => {
        if (signal.aborted) return;
        await gate.take();
        if (signal.aborted) return;
        checked += 1;
        try {
          const snapshot = await this.sync.fetch(
            {
              payflowId: payment.payflowId,
              organizationId: payment.organizationId,
              currency: payment.currency,
            },
            signal,
          );
          const result = await this.sync.applyNow(payment.id, snapshot, { source: 'poll' });
          reads.push({ payment, status: snapshot.status });
          events += result.events.length;
          // Wake the relay now, not at the end of a pass that may take minutes.
          if (result.events.length > 0) this.outboxCommitted.committed();
          const change = result.changes?.payment ?? null;
          const installmentChanges = result.changes?.installments.length ?? 0;
          if (result.outcome === 'stale') {
            stale += 1;
            this.metrics?.polled('stale');
          } else if ((result.changes?.events.length ?? 0) === 0) {
            unchanged += 1;
            this.metrics?.polled('unchanged');
          } else {
            this.metrics?.polled('changed');
            changed.push({
              orderId: payment.orderId,
              paymentId: payment.id,
              payflowId: payment.payflowId,
              previousProviderStatus:
                change?.previousProviderStatus ?? result.payment?.providerStatus ?? null,
              providerStatus: change?.providerStatus ?? snapshot.status.status,
              status: change?.status ?? result.payment?.status ?? 'unknown',
              installmentChanges,
              events: result.events.length,
            });
          }
        } catch (error) {
          this.metrics?.polled('failed');
          failed.push({
            orderId: payment.orderId,
            paymentId: payment.id,
            payflowId: payment.payflowId,
            error: describeError(error),
          });
          this.logger.warn(
            { paymentId: payment.id, payflowId: payment.payflowId, err: describeError(error) },
            'reconciliation: payment not checked',
          );
        }
      });
      const recorded = await this.effects.checkMany(reads, 'reconcile');
      unexplained += recorded.filter((sighting) => sighting.firstSeen).length;
    }
    return {
      ran: true,
      checked,
      unchanged,
      stale,
      changed,
      failed,
      events,
      unexplained,
      durationMs: Date.now() - started,
    };
  }
}
