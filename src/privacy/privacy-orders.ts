/**
 * The orders a selection covers. One order: itself, when the bridge holds anything under its
 * id. A customer number: the orders whose
 * payment request named it (`orders.customer_number`), and the orders of dead letters whose
 * event names it as `data.customer.customerNumber` (a payment request that never took effect
 * left no customer number on its order).
 */
import type { Sql } from '../database/database.js';
import type { PersonalDataStores } from './personal-data-stores.js';
import { parseJson, type Json } from './personal-json.js';
import type { PrivacySelection } from './privacy-selection.js';

export async function ordersOf(
  sql: Sql,
  stores: Pick<PersonalDataStores, 'orders' | 'letters'>,
  selection: PrivacySelection,
): Promise<string[]> {
  if (selection.kind === 'order') {
    return (await stores.orders.isKnown(sql, selection.orderId)) ? [selection.orderId] : [];
  }
  const { customerNumber } = selection;
  const orders = new Set(await stores.orders.ofCustomer(sql, customerNumber));
  for (const letter of await stores.letters.mentioning(sql, customerNumber)) {
    if (letter.value === null || orders.has(letter.orderId)) continue;
    const event = parseJson(letter.value);
    if (event !== undefined && customerNumberOf(event) === customerNumber) {
      orders.add(letter.orderId);
    }
  }
  return [...orders].sort();
}

/** `data.customer.customerNumber` of an ERP event, if it has one. */
export function customerNumberOf(event: Json): string | undefined {
  const customer = field(field(event, 'data'), 'customer');
  const value = field(customer, 'customerNumber');
  return typeof value === 'string' ? value.trim() : undefined;
}

function field(value: Json | undefined, name: string): Json | undefined {
  if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) {
    return undefined;
  }
  return value[name];
}
