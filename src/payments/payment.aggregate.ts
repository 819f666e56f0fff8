/**
 * The payment aggregate: the one place that knows a payment's rules. Built from what
 * Postgres holds (the payment row, its installments and its refunds), it answers every
 * intent of a command (add, change or remove an installment, refund, cancel, mark paid)
 * with the changes to persist, or refuses it with a `MappingFailedError` carrying a stable
 * code (the event is dead-lettered as `mapping_failed`). It is pure: the repositories keep
 * owning their SQL and apply its changes (payment-aggregate.store.ts).
 *
 * Rules:
 * - A new payment: a gross total above 0, a net total not below 0 (checkNewPaymentTotals);
 *   its installment plan, if any, sums exactly to the gross total, every reference once,
 *   every installment above 0 (checkInstallmentPlan).
 * - Total: a payment with installments has a total equal to the sum of its live (not
 *   removed) installments. Every installment change moves the total by exactly what it moves
 *   that sum (money in bigint minor units); a stored total that already differs is reported
 *   as an invariant violation, never silently repaired and never a refusal (Payflow took
 *   the change already when it is applied).
 * - Installment references: a new one must never have been used by the payment (removed
 *   ones included); a change or removal names a live installment with a Payflow id.
 * - Refunds: net at most gross; the payment's currency; a refund reference only once.
 *   What may still be refunded (what was collected minus earlier refunds) is Payflow's
 *   rule (422 business.refund_exceeds_remaining), as only Payflow knows what was collected.
 * - Status succession: a final Payflow status (final-status.ts) never goes back to a
 *   non-final one. The status sync refuses such a snapshot; a command's own answer is
 *   Payflow's word on the payment and is kept, the regression reported as a violation.
 * - Bridge-side state succession (creating → created | in_doubt | creation_failed …):
 *   STATE_PREDECESSORS, which the repository's guarded updates are written from.
 */
import { MappingFailedError } from '../errors/dead-letter.errors.js';
import { currencyExponent } from '../money/money.js';
import {
  normalizePaymentStatus,
  type NormalizedStatus,
  type PaymentState,
} from './payment-status.js';
import { isFinalPaymentStatus } from './status-sync/final-status.js';

/** An installment of the payment as the aggregate sees it (removed ones included). */
export interface PaymentInstallment {
  /** installments.id */
  readonly id: string;
  /** The ERP's reference (null: none was given). */
  readonly ref: string | null;
  readonly payflowId: string | null;
  /** YYYY-MM-DD */
  readonly date: string;
  readonly grossMinor: bigint;
  readonly removed: boolean;
}

/** A refund made earlier. */
export interface PaymentRefund {
  readonly refundRef: string;
  readonly currency: string;
  readonly grossMinor: bigint;
}

/** What Postgres holds of a payment created at Payflow. */
export interface PaymentSnapshot {
  /** payments.id */
  readonly id: string;
  readonly orderId: string;
  readonly currency: string;
  readonly state: string;
  readonly providerStatus: string | null;
  readonly totalGrossMinor: bigint;
  /** Every installment row, removed ones included. */
  readonly installments: readonly PaymentInstallment[];
  readonly refunds: readonly PaymentRefund[];
}

/** A live installment with its Payflow id: what a change or a removal acts on. */
export type LiveInstallment = PaymentInstallment & {
  readonly ref: string;
  readonly payflowId: string;
};

/** A broken invariant: the change still applies (Payflow made it), the break is reported. */
export interface InvariantViolation {
  readonly code: 'PAYMENT.TOTAL_MISMATCH' | 'PAYMENT.STATUS_REGRESSION';
  readonly message: string;
}

/** Payflow's answer to an installment create, as it is stored. */
export interface InstallmentAnswer {
  readonly payflowId: string;
  readonly date: string;
  readonly grossMinor: number;
  readonly type: string;
  readonly status: string;
}

export type PaymentChange =
  | {
      readonly kind: 'installment_added';
      readonly paymentId: string;
      readonly ref: string;
      readonly answer: InstallmentAnswer;
      readonly totalDeltaMinor: bigint;
      readonly violations: readonly InvariantViolation[];
    }
  | {
      readonly kind: 'installment_changed';
      readonly paymentId: string;
      readonly installmentId: string;
      readonly date: string;
      readonly grossMinor: number;
      readonly status: string;
      readonly totalDeltaMinor: bigint;
      readonly violations: readonly InvariantViolation[];
    }
  | {
      readonly kind: 'installment_removed';
      readonly paymentId: string;
      readonly installmentId: string;
      readonly status: string;
      readonly totalDeltaMinor: bigint;
      readonly violations: readonly InvariantViolation[];
    };

/** A Payflow status a command answered, to record with its normalized status. */
export interface StatusChange {
  readonly paymentId: string;
  readonly providerStatus: string;
  readonly previousProviderStatus: string | null;
  readonly status: NormalizedStatus;
  readonly violations: readonly InvariantViolation[];
}

export interface RefundRequest {
  readonly refundRef: string;
  readonly currency: string;
}

/** Which bridge-side states each state may be entered from (guarded in the repository's SQL). */
export const STATE_PREDECESSORS = {
  created: ['creating', 'in_doubt'],
  creation_failed: ['creating'],
  in_doubt: ['creating'],
} as const satisfies Partial<Record<PaymentState, readonly PaymentState[]>>;

/** Whether Payflow status `next` may follow `previous`: never from final back to non-final. */
export function statusMayFollow(previous: string | null, next: string): boolean {
  return !(isFinalPaymentStatus(previous) && previous !== next && !isFinalPaymentStatus(next));
}

/** A refund's own amounts (before any payment is known): net at most gross. */
export function checkRefundAmounts(grossMinor: number | bigint, netMinor: number | bigint): void {
  if (BigInt(netMinor) > BigInt(grossMinor)) {
    throw new MappingFailedError(
      'ORDER.REFUND_NET_ABOVE_GROSS',
      'amountNet is greater than amountGross',
    );
  }
}

/** An installment of a new payment's plan. */
export interface PlannedInstallmentAmount {
  readonly ref: string;
  /** 1-based. */
  readonly position: number;
  readonly grossMinor: number;
}

/** Minor units as decimal text with the currency ("-0.01 NOK"), exact for any bigint. */
function money(minor: number | bigint, currency: string): string {
  const value = BigInt(minor);
  const exponent = currencyExponent(currency);
  const digits = (value < 0n ? -value : value).toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = exponent > 0 ? `.${digits.slice(digits.length - exponent)}` : '';
  return `${value < 0n ? '-' : ''}${whole}${fraction} ${currency}`;
}

/** A new payment's totals: gross above 0, net not below 0 (else mapping_failed). */
export function checkNewPaymentTotals(
  totals: { readonly grossMinor: number; readonly netMinor: number },
  currency: string,
): void {
  if (totals.grossMinor <= 0) {
    throw new MappingFailedError(
      'ORDER.NON_POSITIVE_TOTAL',
      `the lines' gross total is ${money(totals.grossMinor, currency)}; it must be greater than 0`,
    );
  }
  if (totals.netMinor < 0) {
    throw new MappingFailedError(
      'ORDER.NEGATIVE_NET_TOTAL',
      `the lines' net total is ${money(totals.netMinor, currency)}; it must not be negative`,
    );
  }
}

/**
 * A new payment's installment plan against its gross total (else mapping_failed, in this
 * order): the sum is the total exactly, each reference once, each installment above 0.
 */
export function checkInstallmentPlan(
  plan: readonly PlannedInstallmentAmount[],
  grossMinor: number,
  currency: string,
): void {
  const sum = sumExact(plan.map((entry) => BigInt(entry.grossMinor)));
  if (sum !== BigInt(grossMinor)) {
    throw new MappingFailedError(
      'ORDER.INSTALLMENTS_MISMATCH',
      `the installments sum to ${money(sum, currency)}, not the gross total ${money(grossMinor, currency)}`,
    );
  }
  const refs = new Set<string>();
  for (const entry of plan) {
    if (refs.has(entry.ref)) {
      throw new MappingFailedError(
        'ORDER.DUPLICATE_INSTALLMENT_REF',
        `installment reference "${entry.ref}" is used twice`,
      );
    }
    refs.add(entry.ref);
  }
  const empty = plan.find((entry) => entry.grossMinor <= 0);
  if (empty !== undefined) {
    throw new MappingFailedError(
      'ORDER.INSTALLMENT_NOT_POSITIVE',
      `installment ${empty.position} would be ${money(empty.grossMinor, currency)}; every installment must be greater than 0`,
    );
  }
}

/** Exact sum of minor units. */
export function sumExact(values: Iterable<bigint>): bigint {
  let sum = 0n;
  for (const value of values) sum += value;
  return sum;
}

export class PaymentAggregate {
  private constructor(private readonly payment: PaymentSnapshot) {}

  static of(snapshot: PaymentSnapshot): PaymentAggregate {
    return new PaymentAggregate(snapshot);
  }

  get id(): string {
    return this.payment.id;
  }

  get currency(): string {
    return this.payment.currency;
  }

  get totalGrossMinor(): bigint {
    return this.payment.totalGrossMinor;
  }

  /** Sum of the live installments. */
  get installmentsGrossMinor(): bigint {
    return sumExact(this.live().map((installment) => installment.grossMinor));
  }

  /** The total's invariant, as it stands in the snapshot (empty: it holds). */
  totalViolations(): InvariantViolation[] {
    if (this.payment.installments.length === 0) return [];
    const sum = this.installmentsGrossMinor;
    if (sum === this.payment.totalGrossMinor) return [];
    return [
      {
        code: 'PAYMENT.TOTAL_MISMATCH',
        message: `the payment's total (${this.payment.totalGrossMinor} minor units) is not the sum of its live installments (${sum})`,
      },
    ];
  }

  /** A new installment's reference: never used by the payment, removed ones included. */
  requireNewInstallmentRef(ref: string): void {
    if (this.payment.installments.some((installment) => installment.ref === ref)) {
      throw new MappingFailedError(
        'ORDER.DUPLICATE_INSTALLMENT_REF',
        `installment reference "${ref}" is already used by the order's payment`,
      );
    }
  }

  /** The live installment `ref` with its Payflow id; else mapping_failed. */
  requireLiveInstallment(ref: string): LiveInstallment {
    const found = this.live().find((installment) => installment.ref === ref);
    if (found === undefined || found.payflowId === null) {
      throw new MappingFailedError(
        'ORDER.UNKNOWN_INSTALLMENT_REF',
        `installment reference "${ref}" is not a live installment of the order's payment`,
      );
    }
    return { ...found, ref, payflowId: found.payflowId };
  }

  /** Payflow created installment `ref`: it joins the plan, the total grows by its amount. */
  addInstallment(ref: string, answer: InstallmentAnswer): PaymentChange {
    return {
      kind: 'installment_added',
      paymentId: this.payment.id,
      ref,
      answer,
      totalDeltaMinor: BigInt(answer.grossMinor),
      violations: this.totalViolations(),
    };
  }

  /** Payflow changed installment `ref`: the total moves by the difference. */
  changeInstallment(
    ref: string,
    answer: { readonly date: string; readonly grossMinor: number; readonly status: string },
  ): PaymentChange {
    const installment = this.requireLiveInstallment(ref);
    return {
      kind: 'installment_changed',
      paymentId: this.payment.id,
      installmentId: installment.id,
      date: answer.date,
      grossMinor: answer.grossMinor,
      status: answer.status,
      totalDeltaMinor: BigInt(answer.grossMinor) - installment.grossMinor,
      violations: this.totalViolations(),
    };
  }

  /** Payflow removed installment `ref`: it leaves the plan, the total shrinks by its amount. */
  removeInstallment(ref: string, status: string): PaymentChange {
    const installment = this.requireLiveInstallment(ref);
    return {
      kind: 'installment_removed',
      paymentId: this.payment.id,
      installmentId: installment.id,
      status,
      totalDeltaMinor: -installment.grossMinor,
      violations: this.totalViolations(),
    };
  }

  /** A refund may be asked of Payflow: in the payment's currency, its reference new. */
  requestRefund(refund: RefundRequest): void {
    if (refund.currency !== this.payment.currency) {
      throw new MappingFailedError(
        'ORDER.CURRENCY_MISMATCH',
        `refund ${refund.refundRef} is in ${refund.currency} but the payment is in ${this.payment.currency}`,
      );
    }
    if (this.payment.refunds.some((made) => made.refundRef === refund.refundRef)) {
      throw new MappingFailedError(
        'ORDER.DUPLICATE_REFUND',
        `refund ${refund.refundRef} of order ${this.payment.orderId} was made already`,
      );
    }
  }

  /** Payflow cancelled the payment, answering `providerStatus`. */
  cancel(providerStatus: string): StatusChange {
    return this.statusChange(
      providerStatus,
      normalizePaymentStatus(providerStatus, { cancelledByBridge: true }),
    );
  }

  /** Payflow marked the payment paid, answering `providerStatus`. */
  markPaid(providerStatus: string): StatusChange {
    return this.statusChange(providerStatus, normalizePaymentStatus(providerStatus));
  }

  private statusChange(providerStatus: string, status: NormalizedStatus): StatusChange {
    const previous = this.payment.providerStatus;
    const violations: InvariantViolation[] = statusMayFollow(previous, providerStatus)
      ? []
      : [
          {
            code: 'PAYMENT.STATUS_REGRESSION',
            message: `Payflow answered ${providerStatus} to a command on a payment whose status ${previous ?? 'null'} is final`,
          },
        ];
    return {
      paymentId: this.payment.id,
      providerStatus,
      previousProviderStatus: previous,
      status,
      violations,
    };
  }

  private live(): PaymentInstallment[] {
    return this.payment.installments.filter((installment) => !installment.removed);
  }
}
