/**
 * An installment or document that Payflow holds for one of the order's payments and that no
 * event of the order explains (issue 26 §1), as `order show` and the console's timeline show
 * it. A finding the bridge later recorded after all (its Payflow id now has a row of the
 * bridge) is kept, with `explainedBy` naming that row, and is no longer shown as unexplained.
 */

/**
 * Decimal text in major units, and the currency: order-show.view.ts's AmountView, spelled out
 * here because that file imports this one.
 */
interface Amount {
  readonly amount: string;
  readonly currency: string;
}

export interface UnexplainedEffectView {
  /** installment or document. */
  readonly kind: string;
  /** Payflow's id of the installment or document. */
  readonly payflowId: string;
  /** An installment's amount and date as Payflow last showed them. */
  readonly gross: Amount | null;
  readonly dueDate: string | null;
  /** An installment's status at Payflow when last seen (CANCELLED once removed there). */
  readonly providerStatus: string | null;
  /** A document's file name, where Payflow showed one (sanitized). */
  readonly fileName: string | null;
  readonly firstSeenAt: string;
  /** The read that found it: webhook, reconcile or probe. */
  readonly firstSeenBy: string;
  readonly lastSeenAt: string;
  /** The bridge's row that explains it since (e.g. `installment INST-3`), else null. */
  readonly explainedBy: string | null;
}

/** What it is, in a few words: `installment … (125.00 NOK, 2027-03-01)`. */
export function effectLabel(view: UnexplainedEffectView): string {
  const detail =
    view.kind === 'installment'
      ? [view.gross === null ? null : `${view.gross.amount} ${view.gross.currency}`, view.dueDate]
      : [view.fileName ?? 'no file name shown'];
  const shown = detail.filter((part): part is string => part !== null);
  return `${view.kind} ${view.payflowId}${shown.length === 0 ? '' : ` (${shown.join(', ')})`}`;
}

/** One line of `order show`. */
export function effectLine(view: UnexplainedEffectView): string {
  const seen = `first seen ${view.firstSeenAt} by ${view.firstSeenBy}`;
  if (view.explainedBy !== null) {
    return `${effectLabel(view)} at Payflow, ${seen}: explained since, the bridge recorded it as ${view.explainedBy}`;
  }
  const status = view.providerStatus === null ? '' : `, status ${view.providerStatus}`;
  return (
    `${effectLabel(view)} at Payflow that no event of this order explains, ${seen} ` +
    `(last seen ${view.lastSeenAt}${status})`
  );
}
