/**
 * The shared "fetch the authoritative status, compare, apply, emit" step of the webhook
 * processor and the reconciliation poller.
 *
 * `fetch` takes the database's clock, then GETs paymentStatus (X-Organization-Id = the
 * payment's organization). `apply`, in the caller's transaction, locks the payment row
 * (FOR UPDATE) and applies the snapshot only when it was fetched after the one Postgres
 * holds (`payments.status_checked_at`), so an older snapshot never overwrites a newer one,
 * whichever of the processor, the poller or another replica applies first. The changes,
 * their `payment_status_history` rows and their status events (outbox) commit together.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Database, type Sql } from '../../database/database.js';
import { OutboxWriter } from '../../outbox/outbox-writer.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, PaymentStatus } from '../../payflow/payflow.types.js';
import type { PayflowTraceHeaders } from '../../payflow/payflow-trace.js';
import { InstallmentRepository } from '../installment.repository.js';
import { PaymentStatusHistoryRepository } from '../payment-status-history.repository.js';
import { PaymentRepository } from '../payment.repository.js';
import type { StatusEvent } from '../payment-status-events.js';
import {
  computeStatusChanges,
  type StatusChanges,
  type StoredPayment,
  type SyncSource,
} from './status-changes.js';

/** What the sync needs to call Payflow for a payment. */
export interface SyncTarget {
  readonly payflowId: string;
  readonly organizationId: string | null;
  readonly currency?: string;
}

export interface Snapshot {
  /** Database time taken before the GET was sent. */
  readonly fetchedAt: Date;
  readonly status: PaymentStatus;
}

export type ApplyOutcome =
  /** The snapshot was applied (it may hold no change). */
  | 'applied'
  /** A snapshot fetched later was applied already: nothing written. */
  | 'stale'
  /** No such payment, or it has no Payflow id. */
  | 'missing';

export interface ApplyResult {
  readonly outcome: ApplyOutcome;
  readonly payment: StoredPayment | null;
  readonly changes: StatusChanges | null;
  /** Every event written to the outbox (changes and the caller's extra events). */
  readonly events: readonly StatusEvent[];
}

export interface ApplyOptions {
  readonly source: SyncSource;
  /** Made from the locked payment (even when the snapshot is stale), emitted with the changes. */
  readonly extraEvents?: (payment: StoredPayment, snapshot: Snapshot) => readonly StatusEvent[];
  /** W3C trace headers for the events (the webhook's trace, CONTRACT §8). */
  readonly trace?: { readonly traceparent: string; readonly tracestate?: string };
}

@Injectable()
export class PaymentStatusSync {
  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(OutboxWriter) private readonly outbox: OutboxWriter,
    @Inject(PAYFLOW_API) private readonly payflow: PayflowApi,
    // Optional so that the CLI can build the sync by hand (reconcile).
    @Optional() private readonly payments: PaymentRepository = new PaymentRepository(),
    @Optional() private readonly installments: InstallmentRepository = new InstallmentRepository(),
    @Optional()
    private readonly history: PaymentStatusHistoryRepository = new PaymentStatusHistoryRepository(),
  ) {}

  /** GET paymentStatus, with the time taken before it (database clock); sends `trace` (W3C). */
  async fetch(
    target: SyncTarget,
    signal?: AbortSignal,
    trace?: PayflowTraceHeaders,
  ): Promise<Snapshot> {
    const fetchedAt = await this.payments.databaseNow(this.database.sql);
    const status = await this.payflow.getPaymentStatus(target.payflowId, {
      ...(target.organizationId === null ? {} : { organizationId: target.organizationId }),
      ...(target.currency === undefined ? {} : { currency: target.currency }),
      ...(signal === undefined ? {} : { signal }),
      ...(trace === undefined ? {} : { trace }),
    });
    return { fetchedAt, status };
  }

  /** `apply` in its own transaction. */
  applyNow(paymentId: string, snapshot: Snapshot, options: ApplyOptions): Promise<ApplyResult> {
    return this.database.transaction((tx) => this.apply(tx, paymentId, snapshot, options));
  }

  /** Applies a snapshot in the caller's transaction (see the file comment). */
  async apply(
    tx: Sql,
    paymentId: string,
    snapshot: Snapshot,
    options: ApplyOptions,
  ): Promise<ApplyResult> {
    const row = await this.payments.lockForSync(tx, paymentId, snapshot.fetchedAt);
    if (row?.payflowId == null) {
      return { outcome: 'missing', payment: null, changes: null, events: [] };
    }
    const payment: StoredPayment = {
      id: row.id,
      orderId: row.orderId,
      organizationId: row.organizationId,
      payflowId: row.payflowId,
      state: row.state,
      providerStatus: row.providerStatus,
      status: row.status,
    };
    const extra = options.extraEvents?.(payment, snapshot) ?? [];
    if (!row.fresh) {
      await this.emit(tx, extra, options.trace);
      return { outcome: 'stale', payment, changes: null, events: extra };
    }
    const installments = await this.installments.forSync(tx, paymentId);
    const changes = computeStatusChanges(
      payment,
      installments,
      { status: snapshot.status.status, installments: snapshot.status.installments },
      options.source,
    );
    const change = changes.payment;
    await this.payments.recordSync(tx, {
      paymentId,
      checkedAt: snapshot.fetchedAt,
      providerStatus: change?.providerStatus ?? null,
      status: change?.status ?? null,
      polled: options.source === 'poll',
    });
    if (changes.installments.length > 0) {
      await this.installments.setStatuses(
        tx,
        changes.installments.map((entry) => ({
          id: entry.installmentId,
          status: entry.providerStatus,
        })),
      );
    }
    if (change !== null) {
      await this.history.insert(tx, {
        paymentId,
        providerStatus: change.providerStatus,
        previousProviderStatus: change.previousProviderStatus,
        status: change.status,
        source: options.source,
      });
    }
    const events = [...changes.events, ...extra];
    await this.emit(tx, events, options.trace);
    return { outcome: 'applied', payment, changes, events };
  }

  private async emit(
    tx: Sql,
    events: readonly StatusEvent[],
    trace: ApplyOptions['trace'],
  ): Promise<void> {
    await this.outbox.append(tx, events, undefined, trace);
  }
}
