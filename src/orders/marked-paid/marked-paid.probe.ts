/**
 * Did a manual-paid call take effect? A payment marked paid is final and paid (PAID, or
 * SUCCESS); any other status means it did not, and it is sent again (Payflow refuses it
 * if the payment became final otherwise meanwhile).
 */
import type { ManualPaidResponse, PaymentStatus } from '../../payflow/payflow.types.js';
import type { ProbeVerdict } from '../engine/command-spec.js';

const PAID = new Set(['PAID', 'SUCCESS']);

export function markPaidVerdict(status: PaymentStatus): ProbeVerdict<ManualPaidResponse> {
  const evidence = { read: 'GET paymentStatus', shown: `paymentStatus ${status.status}` };
  if (!PAID.has(status.status)) return { kind: 'not_applied', evidence };
  return {
    kind: 'took_effect',
    result: { paymentId: status.paymentId, paymentStatus: status.status },
    evidence,
  };
}
