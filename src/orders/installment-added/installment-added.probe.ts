/**
 * Did a create-installment call take effect? An installment of the payment with that date
 * and amount whose id the bridge does not know (not in its `installments` table) is the one
 * it created: adopted. None: it did not, and it is sent again.
 */
import type { Installment, InstallmentInput, PaymentStatus } from '../../payflow/payflow.types.js';
import type { ProbeVerdict } from '../engine/command-spec.js';

export function installmentAddedVerdict(
  status: PaymentStatus,
  wanted: Pick<InstallmentInput, 'date' | 'grossAmountMinor'>,
  knownPayflowIds: ReadonlySet<string>,
): ProbeVerdict<Installment> {
  const read = 'GET paymentStatus';
  const found = status.installments.find(
    (installment) =>
      !knownPayflowIds.has(installment.id) &&
      installment.date === wanted.date &&
      installment.grossAmountMinor === wanted.grossAmountMinor,
  );
  if (found !== undefined) {
    return {
      kind: 'took_effect',
      result: found,
      evidence: { read, shown: `unknown installment ${found.id} of that date and amount` },
    };
  }
  const unknown = status.installments.filter((entry) => !knownPayflowIds.has(entry.id)).length;
  return {
    kind: 'not_applied',
    evidence: {
      read,
      shown: `no unknown installment of that date and amount (${status.installments.length} installments, ${unknown} unknown)`,
    },
  };
}
