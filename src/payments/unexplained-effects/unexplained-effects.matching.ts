/**
 * Which installments and documents that Payflow holds for a payment no event of the order
 * explains (issue 26 §1), decided from one read of Payflow and one of the bridge's records.
 * Pure: the service (unexplained-effects.service.ts) does the reading and the recording.
 *
 * An effect is explained when the bridge has a row for it (its Payflow id in `installments`
 * or `documents`, removed ones included: they were the bridge's own), or, for an installment,
 * when a planned installment of the bridge that never got its Payflow id has the same date
 * and amount (it stands for one such installment). A kind is not checked at all while an
 * attempt that could be about to record an effect of that kind is live (`started` or
 * `in_doubt`): its effect may be at Payflow before its row is in Postgres. Documents are not
 * checked when Payflow's answer lists no `files` (the spec makes the field optional, and it
 * is the only call that shows a payment's documents: docs/assumptions.md).
 */
import type { OrderEventType } from '../../events/order-event.schema.js';
import type { PaymentStatus } from '../../payflow/payflow.types.js';

export const EFFECT_KINDS = ['installment', 'document'] as const;
export type EffectKind = (typeof EFFECT_KINDS)[number];

/** Which read of Payflow found it: a webhook's refetch, the reconciliation poll, a probe. */
export const SIGHTING_SOURCES = ['webhook', 'reconcile', 'probe'] as const;
export type SightingSource = (typeof SIGHTING_SOURCES)[number];

/** The commands whose live attempt may be about to record an effect of the kind. */
export const COMMANDS_BY_KIND: Readonly<Record<EffectKind, readonly OrderEventType[]>> = {
  // A creation records its plan's installments when it completes.
  installment: ['order.payment_requested', 'order.installment_added'],
  document: ['order.document_attached'],
};

export interface HeldInstallment {
  readonly id: string;
  /** YYYY-MM-DD */
  readonly date: string;
  readonly grossMinor: bigint;
  readonly status: string;
}

export interface HeldDocument {
  readonly id: string;
  readonly fileName: string | null;
}

/** What one read of Payflow showed of a payment's installments and documents. */
export interface PayflowHoldings {
  readonly currency: string;
  readonly installments: readonly HeldInstallment[];
  /** Null when the answer listed no `files` (absent or null): documents cannot be checked. */
  readonly documents: readonly HeldDocument[] | null;
}

/** A planned installment of the bridge that has no Payflow id. */
export interface UnboundInstallment {
  readonly date: string;
  readonly grossMinor: bigint;
}

/** What the bridge has recorded of one payment, read in one statement. */
export interface BridgeRecords {
  readonly installmentIds: ReadonlySet<string>;
  readonly unboundInstallments: readonly UnboundInstallment[];
  readonly documentIds: ReadonlySet<string>;
  /** The commands of the payment's attempts that are not finished (started, in_doubt). */
  readonly liveCommands: ReadonlySet<string>;
}

export type UnexplainedEffect =
  | {
      readonly kind: 'installment';
      readonly payflowId: string;
      readonly date: string;
      readonly grossMinor: bigint;
      readonly currency: string;
      readonly status: string;
    }
  | { readonly kind: 'document'; readonly payflowId: string; readonly fileName: string | null };

export interface SkippedKind {
  readonly kind: EffectKind;
  readonly why: string;
}

export interface Matching {
  readonly unexplained: readonly UnexplainedEffect[];
  /** Kinds that were not checked, and why. */
  readonly skipped: readonly SkippedKind[];
}

/** The holdings in a paymentStatus answer (amounts as bigint minor units). */
export function holdingsOf(status: PaymentStatus): PayflowHoldings {
  const listed = status.raw.files !== undefined && status.raw.files !== null;
  return {
    currency: status.currency,
    installments: status.installments.map((installment) => ({
      id: installment.id,
      date: installment.date,
      grossMinor: BigInt(installment.grossAmountMinor),
      status: installment.status,
    })),
    documents: listed
      ? status.files.map((file) => ({ id: file.id, fileName: file.fileName ?? null }))
      : null,
  };
}

/** The records' live command that keeps `kind` from being checked, if any. */
function liveCommandFor(kind: EffectKind, records: BridgeRecords): string | undefined {
  return COMMANDS_BY_KIND[kind].find((command) => records.liveCommands.has(command));
}

function unexplainedInstallments(
  held: PayflowHoldings,
  records: BridgeRecords,
): UnexplainedEffect[] {
  const unbound = [...records.unboundInstallments];
  const seen = new Set<string>();
  const found: UnexplainedEffect[] = [];
  for (const installment of held.installments) {
    if (records.installmentIds.has(installment.id) || seen.has(installment.id)) continue;
    seen.add(installment.id);
    const plan = unbound.findIndex(
      (entry) => entry.date === installment.date && entry.grossMinor === installment.grossMinor,
    );
    if (plan >= 0) {
      unbound.splice(plan, 1);
      continue;
    }
    found.push({
      kind: 'installment',
      payflowId: installment.id,
      date: installment.date,
      grossMinor: installment.grossMinor,
      currency: held.currency,
      status: installment.status,
    });
  }
  return found;
}

function unexplainedDocuments(
  documents: readonly HeldDocument[],
  records: BridgeRecords,
): UnexplainedEffect[] {
  const seen = new Set<string>();
  const found: UnexplainedEffect[] = [];
  for (const document of documents) {
    if (records.documentIds.has(document.id) || seen.has(document.id)) continue;
    seen.add(document.id);
    found.push({ kind: 'document', payflowId: document.id, fileName: document.fileName });
  }
  return found;
}

/** The effects at Payflow that nothing the bridge recorded or is doing explains. */
export function unexplainedEffects(held: PayflowHoldings, records: BridgeRecords): Matching {
  const unexplained: UnexplainedEffect[] = [];
  const skipped: SkippedKind[] = [];
  const installmentAttempt = liveCommandFor('installment', records);
  if (installmentAttempt === undefined) unexplained.push(...unexplainedInstallments(held, records));
  else skipped.push({ kind: 'installment', why: `a live ${installmentAttempt} attempt` });
  const documentAttempt = liveCommandFor('document', records);
  if (documentAttempt !== undefined) {
    skipped.push({ kind: 'document', why: `a live ${documentAttempt} attempt` });
  } else if (held.documents === null) {
    skipped.push({ kind: 'document', why: 'Payflow listed no files' });
  } else {
    unexplained.push(...unexplainedDocuments(held.documents, records));
  }
  return { unexplained, skipped };
}

/** Whether a read can show anything to check (a payment without either needs no query). */
export function holdsAnything(held: PayflowHoldings): boolean {
  return held.installments.length > 0 || (held.documents?.length ?? 0) > 0;
}
