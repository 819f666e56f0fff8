/**
 * Did a DELETE of the installment take effect? Payflow cancels a deleted installment
 * (status CANCELLED) or no longer lists it; still live, it did not, and it is sent again.
 */
import type { Installment, PaymentStatus } from '../../payflow/payflow.types.js';
import type { ProbeVerdict } from '../engine/command-spec.js';

/** What the removal's completion reads of Payflow's answer. */
export type RemovedInstallment = Pick<Installment, 'status'>;

export function installmentRemovedVerdict(
  status: PaymentStatus,
  payflowInstallmentId: string,
): ProbeVerdict<RemovedInstallment> {
  const read = 'GET paymentStatus';
  const found = status.installments.find((entry) => entry.id === payflowInstallmentId);
  if (found === undefined) {
    return {
      kind: 'took_effect',
      result: { status: 'CANCELLED' },
      evidence: { read, shown: `installment ${payflowInstallmentId} not listed` },
    };
  }
  const evidence = { read, shown: `installment ${found.id} ${found.status}` };
  if (found.status === 'CANCELLED') return { kind: 'took_effect', result: found, evidence };
  return { kind: 'not_applied', evidence };
}
