/**
 * The matching of settlement lines to what the bridge knows (issue 29 §1), as one pure
 * function over one Payflow payment: every current line of that payment (all nights, only
 * the newest version of each night) and the facts of the payment (its total, installments,
 * refunds, when it was paid and whether it was paid elsewhere). No I/O: the reconciler
 * loads both sides, calls `matchPayment` and stores what it returns.
 *
 * Rules (the finding kinds are CONTRACT §10's names):
 * - a payment line (type `payment`, or any non-negative line that is not a refund) with an
 *   installment id is due that installment's amount (subject `installment:<id>`); without
 *   one, the payment's total gross (subject `payment:<Payflow id>`). One line equal to the
 *   amount due is `matched`; another amount (or an installment the payment does not have)
 *   is `amount_mismatch`; two or more lines of one subject are `settled_twice`.
 * - a payment marked paid by hand (manual-paid, "paid elsewhere") is due nothing: a payment
 *   line for it is `amount_mismatch` with 0 expected (money came twice), and it is never
 *   `not_settled`.
 * - refund lines (type `refund`, or negative gross) are matched by amount, each to one
 *   refund of the payment not matched yet; a line that finds none, or refund lines that
 *   add up to more than the refunds made, make one `refund_mismatch` for the payment.
 * - a Payflow payment id the bridge never created: `unknown_payment`, every line of it.
 * - a payment paid at least `expectedWithinMs` before `now`, not paid elsewhere, with no
 *   payment line: `not_settled`.
 */
import { sumMinor } from '../../money/money.js';

export const FINDING_KINDS = [
  'amount_mismatch',
  'unknown_payment',
  'not_settled',
  'settled_twice',
  'refund_mismatch',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/** What a line is, once matched. */
export const LINE_MATCHES = [
  'matched',
  'amount_mismatch',
  'unknown_payment',
  'settled_twice',
  'refund_mismatch',
] as const;
export type LineMatch = (typeof LINE_MATCHES)[number];

/** One current settlement line, as the matching needs it. */
export interface LineToMatch {
  readonly fileId: string;
  readonly lineNumber: number;
  readonly organizationId: string;
  readonly installmentId: string | null;
  readonly transactionType: string;
  readonly currency: string;
  readonly grossMinor: number;
}

/** What the bridge knows of one of its payments. */
export interface PaymentFacts {
  readonly payflowPaymentId: string;
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly currency: string;
  readonly totalGrossMinor: number;
  /** Live installments (not removed), by Payflow installment id. */
  readonly installments: readonly {
    readonly payflowInstallmentId: string;
    readonly grossMinor: number;
  }[];
  /** Refunds made, each as its positive gross. */
  readonly refundsGrossMinor: readonly number[];
  /** When the bridge first saw it paid, or null. */
  readonly paidAt: Date | null;
  /** Marked paid by hand (manual-paid): settled outside Payflow. */
  readonly paidElsewhere: boolean;
}

export interface Finding {
  readonly kind: FindingKind;
  /** `payment:<Payflow payment id>` or `installment:<Payflow installment id>`. */
  readonly subjectKey: string;
  readonly organizationId: string;
  readonly payflowPaymentId: string;
  readonly orderId: string | null;
  readonly installmentId: string | null;
  readonly currency: string;
  /** The amount due, or null when nothing is known to be due (unknown payment/installment). */
  readonly expectedMinor: number | null;
  readonly settledMinor: number;
}

export interface LineResult {
  readonly fileId: string;
  readonly lineNumber: number;
  readonly match: LineMatch;
  readonly findingKind: FindingKind | null;
  readonly subjectKey: string | null;
}

export interface PaymentMatch {
  readonly lines: readonly LineResult[];
  readonly findings: readonly Finding[];
}

export interface MatchClock {
  readonly now: Date;
  /** SETTLEMENT_EXPECTED_WITHIN in milliseconds. */
  readonly expectedWithinMs: number;
}

export const paymentSubject = (payflowPaymentId: string): string => `payment:${payflowPaymentId}`;
export const installmentSubject = (installmentId: string): string => `installment:${installmentId}`;

/** Is this line money back to the payer? */
export function isRefundLine(line: Pick<LineToMatch, 'transactionType' | 'grossMinor'>): boolean {
  const type = line.transactionType.trim().toLowerCase();
  return type === 'refund' || (type !== 'payment' && line.grossMinor < 0);
}

/** Matches every current line of one Payflow payment (`facts` null: not one of ours). */
export function matchPayment(
  payflowPaymentId: string,
  facts: PaymentFacts | null,
  lines: readonly LineToMatch[],
  clock: MatchClock,
): PaymentMatch {
  if (facts === null) return unknownPayment(payflowPaymentId, lines);
  const results: LineResult[] = [];
  const findings: Finding[] = [];
  const finding = (
    kind: FindingKind,
    subjectKey: string,
    installmentId: string | null,
    expectedMinor: number | null,
    settledMinor: number,
  ): Finding => ({
    kind,
    subjectKey,
    organizationId: facts.organizationId ?? lines[0]?.organizationId ?? '',
    payflowPaymentId,
    orderId: facts.orderId,
    installmentId,
    currency: lines[0]?.currency ?? facts.currency,
    expectedMinor,
    settledMinor,
  });

  const payments = lines.filter((line) => !isRefundLine(line));
  const refunds = lines.filter((line) => isRefundLine(line));

  // Payment lines, by subject (an installment, or the whole payment).
  const bySubject = new Map<string, LineToMatch[]>();
  for (const line of payments) {
    const key =
      line.installmentId === null
        ? paymentSubject(payflowPaymentId)
        : installmentSubject(line.installmentId);
    bySubject.set(key, [...(bySubject.get(key) ?? []), line]);
  }
  for (const [subjectKey, subjectLines] of bySubject) {
    const installmentId = subjectLines[0]!.installmentId;
    const due = amountDue(facts, installmentId);
    const settled = sumMinor(subjectLines.map((line) => line.grossMinor));
    let kind: FindingKind | null = null;
    if (subjectLines.length > 1) kind = 'settled_twice';
    else if (due === null || due !== settled) kind = 'amount_mismatch';
    if (kind !== null) findings.push(finding(kind, subjectKey, installmentId, due, settled));
    for (const line of subjectLines) {
      results.push(lineResult(line, kind ?? 'matched', kind, kind === null ? null : subjectKey));
    }
  }

  // Refund lines: each to one refund of the same amount not matched yet.
  if (refunds.length > 0) {
    const unused = [...facts.refundsGrossMinor];
    const matched = refunds.map((line) => {
      const at = unused.indexOf(-line.grossMinor);
      if (at < 0) return false;
      unused.splice(at, 1);
      return true;
    });
    const made = sumMinor(facts.refundsGrossMinor);
    const settled = -sumMinor(refunds.map((line) => line.grossMinor));
    const mismatch = matched.some((ok) => !ok) || settled > made;
    const subjectKey = paymentSubject(payflowPaymentId);
    if (mismatch) findings.push(finding('refund_mismatch', subjectKey, null, made, settled));
    refunds.forEach((line, index) => {
      // Lines that each match a refund add up to at most the refunds made.
      results.push(
        matched[index] !== true
          ? lineResult(line, 'refund_mismatch', 'refund_mismatch', subjectKey)
          : lineResult(line, 'matched', null, null),
      );
    });
  }

  const notSettled =
    payments.length === 0 &&
    !facts.paidElsewhere &&
    facts.paidAt !== null &&
    clock.now.getTime() - facts.paidAt.getTime() >= clock.expectedWithinMs;
  if (notSettled) {
    findings.push(
      finding('not_settled', paymentSubject(payflowPaymentId), null, facts.totalGrossMinor, 0),
    );
  }
  return { lines: results, findings };
}

/** The amount a payment line is due: 0 when paid elsewhere, null for an unknown installment. */
function amountDue(facts: PaymentFacts, installmentId: string | null): number | null {
  if (facts.paidElsewhere) return 0;
  if (installmentId === null) return facts.totalGrossMinor;
  const installment = facts.installments.find(
    (candidate) => candidate.payflowInstallmentId === installmentId,
  );
  return installment?.grossMinor ?? null;
}

function unknownPayment(payflowPaymentId: string, lines: readonly LineToMatch[]): PaymentMatch {
  const first = lines[0];
  if (first === undefined) return { lines: [], findings: [] };
  const subjectKey = paymentSubject(payflowPaymentId);
  return {
    lines: lines.map((line) => lineResult(line, 'unknown_payment', 'unknown_payment', subjectKey)),
    findings: [
      {
        kind: 'unknown_payment',
        subjectKey,
        organizationId: first.organizationId,
        payflowPaymentId,
        orderId: null,
        installmentId: null,
        currency: first.currency,
        expectedMinor: null,
        settledMinor: sumMinor(lines.map((line) => line.grossMinor)),
      },
    ],
  };
}

function lineResult(
  line: LineToMatch,
  match: LineMatch,
  findingKind: FindingKind | null,
  subjectKey: string | null,
): LineResult {
  return { fileId: line.fileId, lineNumber: line.lineNumber, match, findingKind, subjectKey };
}

/** Totals of a night's lines in one currency (exact integer sums). */
export interface NightTotals {
  readonly grossMinor: number;
  readonly feeMinor: number;
  readonly netMinor: number;
  readonly lines: number;
  readonly linesMatched: number;
  readonly findings: number;
}

/** The totals of some lines with their results (the SQL's sums, for the specs and the CSV). */
export function totalsOf(
  lines: readonly {
    grossMinor: number;
    feeMinor: number;
    netMinor: number;
    match: LineMatch | null;
    findingKind: FindingKind | null;
    subjectKey: string | null;
  }[],
): NightTotals {
  const findings = new Set(
    lines.flatMap((line) =>
      line.findingKind === null ? [] : [`${line.findingKind}|${line.subjectKey ?? ''}`],
    ),
  );
  return {
    grossMinor: sumMinor(lines.map((line) => line.grossMinor)),
    feeMinor: sumMinor(lines.map((line) => line.feeMinor)),
    netMinor: sumMinor(lines.map((line) => line.netMinor)),
    lines: lines.length,
    linesMatched: lines.filter((line) => line.match === 'matched').length,
    findings: findings.size,
  };
}
