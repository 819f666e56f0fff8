/**
 * Which Payflow statuses are final (docs/assumptions.md). The spec's list lacks `PAID`, but
 * its manual-paid transition names it: a payment marked paid is final too. A final payment
 * status never goes back to a non-final one; the status sync refuses such a regression.
 */
export const FINAL_PAYMENT_STATUSES = ['SUCCESS', 'REJECTED', 'PAID'] as const;

export function isFinalPaymentStatus(providerStatus: string | null | undefined): boolean {
  return (
    typeof providerStatus === 'string' &&
    (FINAL_PAYMENT_STATUSES as readonly string[]).includes(providerStatus)
  );
}
