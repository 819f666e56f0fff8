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
import { Inject, Injectable } from '@nestjs/common';
import { Database, type Sql } from '../../database/database.js';
import { OutboxWriter } from '../../events/outbox-writer.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi, PaymentStatus } from '../../payflow/payflow.types.js';
import type { StatusEvent } from '../payment-status-events.js';
import {
  computeStatusChanges,
  type StatusChanges,
  type StoredInstallment,
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
}

interface PaymentRow {
  id: string;
  order_id: string;
  organization_id: string | null;
  payflow_id: string | null;
  state: string;
  provider_status: string | null;
  status: string | null;
  fresh: boolean;
}

@Injectable()
export class PaymentStatusSync {
  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(OutboxWriter) private readonly outbox: OutboxWriter,
    @Inject(PAYFLOW_API) private readonly payflow: PayflowApi,
  ) {}

  /** GET paymentStatus, with the time taken before it (database clock). */
  async fetch(target: SyncTarget, signal?: AbortSignal): Promise<Snapshot> {
    const [row] = await this.database.sql.query<{ now: Date }>('SELECT clock_timestamp() AS now');
    if (row === undefined) throw new Error('no database time');
    const status = await this.payflow.getPaymentStatus(target.payflowId, {
      ...(target.organizationId === null ? {} : { organizationId: target.organizationId }),
      ...(target.currency === undefined ? {} : { currency: target.currency }),
      ...(signal === undefined ? {} : { signal }),
    });
    return { fetchedAt: row.now, status };
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
    const [row] = await tx.query<PaymentRow>(
      `SELECT id, order_id, organization_id, payflow_id, state, provider_status, status,
              (status_checked_at IS NULL OR status_checked_at < $2) AS fresh
         FROM payments WHERE id = $1::uuid FOR UPDATE`,
      [paymentId, snapshot.fetchedAt],
    );
    if (row?.payflow_id == null) {
      return { outcome: 'missing', payment: null, changes: null, events: [] };
    }
    const payment: StoredPayment = {
      id: row.id,
      orderId: row.order_id,
      organizationId: row.organization_id,
      payflowId: row.payflow_id,
      state: row.state,
      providerStatus: row.provider_status,
      status: row.status,
    };
    const extra = options.extraEvents?.(payment, snapshot) ?? [];
    if (!row.fresh) {
      await this.emit(tx, extra);
      return { outcome: 'stale', payment, changes: null, events: extra };
    }
    const installments = await tx.query<StoredInstallment>(
      `SELECT id, installment_ref AS "installmentRef",
              payflow_installment_id AS "payflowInstallmentId",
              provider_status AS "providerStatus"
         FROM installments WHERE payment_id = $1::uuid ORDER BY position, created_at`,
      [paymentId],
    );
    const changes = computeStatusChanges(
      payment,
      installments,
      { status: snapshot.status.status, installments: snapshot.status.installments },
      options.source,
    );
    const change = changes.payment;
    await tx.execute(
      `UPDATE payments
          SET status_checked_at = $2,
              provider_status = COALESCE($3, provider_status),
              status = COALESCE($4, status),
              last_polled_at = CASE WHEN $5 THEN clock_timestamp() ELSE last_polled_at END,
              updated_at = now()
        WHERE id = $1::uuid`,
      [
        paymentId,
        snapshot.fetchedAt,
        change?.providerStatus ?? null,
        change?.status ?? null,
        options.source === 'poll',
      ],
    );
    if (changes.installments.length > 0) {
      await tx.execute(
        `UPDATE installments i SET provider_status = x.status, updated_at = now()
           FROM unnest($1::uuid[], $2::text[]) AS x (id, status)
          WHERE i.id = x.id`,
        [
          changes.installments.map((entry) => entry.installmentId),
          changes.installments.map((entry) => entry.providerStatus),
        ],
      );
    }
    if (change !== null) {
      await tx.execute(
        `INSERT INTO payment_status_history
                (payment_id, provider_status, previous_provider_status, status, source)
         VALUES ($1::uuid, $2, $3, $4, $5)`,
        [
          paymentId,
          change.providerStatus,
          change.previousProviderStatus,
          change.status,
          options.source,
        ],
      );
    }
    const events = [...changes.events, ...extra];
    await this.emit(tx, events);
    return { outcome: 'applied', payment, changes, events };
  }

  private async emit(tx: Sql, events: readonly StatusEvent[]): Promise<void> {
    await this.outbox.append(tx, events);
  }
}
