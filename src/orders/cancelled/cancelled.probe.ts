/**
 * Did a DELETE of the payment take effect? Payflow's own state answers: a cancelled payment
 * is REJECTED (or gone). A cancellation cannot happen twice, so one still open is sent again.
 */
import type { PaymentStatus } from '../../payflow/payflow.types.js';
import type { ProbeVerdict } from '../engine/command-spec.js';

/** What the cancel's completion reads of Payflow's answer. */
export type CancelResult = Pick<PaymentStatus, 'status' | 'installments'>;

const READ = 'GET paymentStatus';

export function cancelVerdict(status: PaymentStatus): ProbeVerdict<CancelResult> {
  const evidence = { read: READ, shown: `paymentStatus ${status.status}` };
  if (status.status === 'REJECTED') return { kind: 'took_effect', result: status, evidence };
  return { kind: 'not_applied', evidence };
}

/** The payment is gone at Payflow (404): the cancel took effect. */
export function cancelGoneVerdict(): ProbeVerdict<CancelResult> {
  return {
    kind: 'took_effect',
    result: { status: 'REJECTED', installments: [] },
    evidence: { read: READ, shown: 'payment not found (404)' },
  };
}
