/**
 * payflow-bridge's normalized payment status: the vocabulary its status events publish
 * (CONTRACT §8), owned here with the other published contracts. src/payments maps
 * Payflow's raw statuses onto it (normalizePaymentStatus).
 */
export const NORMALIZED_STATUSES = ['pending', 'paid', 'failed', 'cancelled', 'unknown'] as const;
export type NormalizedStatus = (typeof NORMALIZED_STATUSES)[number];
