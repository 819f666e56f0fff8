/**
 * What a person asks an export or an erasure about, checked at the door with zod: one
 * order (its ERP order id) or one customer (the ERP customer number of its payment
 * requests), never both.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ValidationError } from '../errors/app-error.js';

/** The orders an export or an erasure covers. */
export type PrivacySelection =
  | { readonly kind: 'order'; readonly orderId: string }
  | { readonly kind: 'customer_number'; readonly customerNumber: string };

/** Input the person must correct. */
export class InvalidPrivacyInputError extends ValidationError {
  constructor(message: string) {
    super('PRIVACY.INVALID_INPUT', message);
  }
}

const orderIdSchema = z.string().trim().min(1).max(200);
const customerNumberSchema = z.string().trim().min(1).max(100);

/** `--order ID` or `--customer-number N`: exactly one. */
export function parsePrivacySelection(options: {
  readonly order?: string | undefined;
  readonly customerNumber?: string | undefined;
}): PrivacySelection {
  const { order, customerNumber } = options;
  if ((order === undefined) === (customerNumber === undefined)) {
    throw new InvalidPrivacyInputError('give exactly one of --order ID or --customer-number N');
  }
  if (order !== undefined) {
    const parsed = orderIdSchema.safeParse(order);
    if (!parsed.success) throw new InvalidPrivacyInputError('--order: 1 to 200 characters');
    return { kind: 'order', orderId: parsed.data };
  }
  const parsed = customerNumberSchema.safeParse(customerNumber);
  if (!parsed.success) {
    throw new InvalidPrivacyInputError('--customer-number: 1 to 100 characters');
  }
  return { kind: 'customer_number', customerNumber: parsed.data };
}

/**
 * How an erasure records what it covered without keeping personal data: the order id, or
 * the customer number's SHA-256 (enough to answer "was this customer erased?").
 */
export function selectionSubject(selection: PrivacySelection): string {
  return selection.kind === 'order'
    ? selection.orderId
    : `sha256:${createHash('sha256').update(selection.customerNumber, 'utf8').digest('hex')}`;
}

/** The selection in a message: an order names its id, a customer is never named. */
export function describeSelection(selection: PrivacySelection): string {
  return selection.kind === 'order' ? `order ${selection.orderId}` : 'that customer number';
}
