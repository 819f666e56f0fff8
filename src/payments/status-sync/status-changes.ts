/**
 * The pure part of the status sync: what Postgres holds for a payment compared with a
 * snapshot from Payflow (GET paymentStatus), and the status events that difference makes.
 * Only real changes produce events, so duplicate or repeated snapshots produce none.
 */
import { statusMayFollow } from '../payment.aggregate.js';
import { normalizePaymentStatus, type NormalizedStatus } from '../payment-status.js';
import type { StatusEvent } from '../payment-status-events.js';

export type SyncSource = 'webhook' | 'poll';

/** The payment as Postgres holds it. */
export interface StoredPayment {
  readonly id: string;
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly payflowId: string;
  /** Bridge-side state: created, cancelled, … */
  readonly state: string;
  readonly providerStatus: string | null;
  readonly status: string | null;
}

export interface StoredInstallment {
  readonly id: string;
  readonly installmentRef: string | null;
  readonly payflowInstallmentId: string | null;
  readonly providerStatus: string | null;
}

/** What the sync reads of a Payflow snapshot. */
export interface FetchedStatus {
  /** Raw paymentStatus, any value (an unknown one normalizes to `unknown`). */
  readonly status: string;
  readonly installments: readonly { readonly id: string; readonly status: string }[];
}

export interface PaymentStatusChange {
  readonly previousProviderStatus: string | null;
  readonly providerStatus: string;
  readonly previousStatus: string | null;
  readonly status: NormalizedStatus;
  /** False when only the stored value was filled in (no event): null → DRAFT. */
  readonly emitted: boolean;
}

export interface InstallmentStatusChange {
  readonly installmentId: string;
  readonly payflowInstallmentId: string;
  readonly installmentRef: string | null;
  readonly previousProviderStatus: string | null;
  readonly providerStatus: string;
  readonly emitted: boolean;
}

export interface StatusChanges {
  readonly payment: PaymentStatusChange | null;
  readonly installments: readonly InstallmentStatusChange[];
  /** The snapshot would move a final payment status back to another status: not applied. */
  readonly regressionRefused: boolean;
  /** Payflow installments that match no installment row (ignored). */
  readonly unmatchedInstallments: number;
  /** Events, installments first, then the payment's. */
  readonly events: readonly StatusEvent[];
}

/** The status a payment is created in: learning it for the first time is not a change. */
const INITIAL_PAYMENT_STATUS = 'DRAFT';
const INITIAL_INSTALLMENT_STATUS = 'CREATED';

export function computeStatusChanges(
  stored: StoredPayment,
  installments: readonly StoredInstallment[],
  fetched: FetchedStatus,
  source: SyncSource,
): StatusChanges {
  const byPayflowId = new Map(
    installments
      .filter((row) => row.payflowInstallmentId !== null)
      .map((row) => [row.payflowInstallmentId as string, row]),
  );
  const installmentChanges: InstallmentStatusChange[] = [];
  let unmatchedInstallments = 0;
  for (const remote of fetched.installments) {
    const row = byPayflowId.get(remote.id);
    if (row === undefined) {
      unmatchedInstallments += 1;
      continue;
    }
    if (row.providerStatus === remote.status) continue;
    installmentChanges.push({
      installmentId: row.id,
      payflowInstallmentId: remote.id,
      installmentRef: row.installmentRef,
      previousProviderStatus: row.providerStatus,
      providerStatus: remote.status,
      emitted: !(row.providerStatus === null && remote.status === INITIAL_INSTALLMENT_STATUS),
    });
  }

  // Which status may follow which is the payment aggregate's rule.
  const regressionRefused = !statusMayFollow(stored.providerStatus, fetched.status);

  let payment: PaymentStatusChange | null = null;
  if (!regressionRefused) {
    const status = normalizePaymentStatus(fetched.status, {
      installmentStatuses: fetched.installments.map((installment) => installment.status),
      cancelledByBridge: stored.state === 'cancelled',
    });
    if (stored.providerStatus !== fetched.status || stored.status !== status) {
      const firstSighting =
        stored.providerStatus === null &&
        fetched.status === INITIAL_PAYMENT_STATUS &&
        (stored.status === null || stored.status === status);
      payment = {
        previousProviderStatus: stored.providerStatus,
        providerStatus: fetched.status,
        previousStatus: stored.status,
        status,
        emitted: !firstSighting,
      };
    }
  }

  const base = {
    orderId: stored.orderId,
    organizationId: stored.organizationId,
    paymentId: stored.payflowId,
  };
  const events: StatusEvent[] = installmentChanges
    .filter((change) => change.emitted)
    .map((change) => ({
      ...base,
      type: 'installment.status_changed' as const,
      data: {
        installmentId: change.payflowInstallmentId,
        installmentRef: change.installmentRef,
        providerStatus: change.providerStatus,
        previousProviderStatus: change.previousProviderStatus,
      },
    }));
  if (payment?.emitted === true) {
    events.push({
      ...base,
      type: 'payment.status_changed',
      data: {
        providerStatus: payment.providerStatus,
        previousProviderStatus: payment.previousProviderStatus,
        status: payment.status,
        source,
      },
    });
  }
  return {
    payment,
    installments: installmentChanges,
    regressionRefused,
    unmatchedInstallments,
    events,
  };
}
