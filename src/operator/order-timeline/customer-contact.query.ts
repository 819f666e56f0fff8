/**
 * The customer's e-mail and phone of an order, for the person on call who must reach them.
 * payflow-bridge keeps no customer table: the only copy it holds is inside the ERP events
 * it could not process (dead letters keep the message as received). The newest one that
 * names a customer is read. Masked by default (`masked`); the console shows the clear
 * values only after a recorded "show" (operator_actions).
 */
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { DeadLetterRepository } from '../../dead-letters/dead-letter.repository.js';

export interface CustomerContact {
  readonly email: string | null;
  readonly phone: string | null;
  /** Where it was read: the dead-lettered event's id. */
  readonly fromEventId: string;
}

const withCustomer = z.object({
  data: z.object({
    customer: z.object({
      email: z.string().optional(),
      phone: z.object({ countryCode: z.string(), number: z.string() }).optional(),
    }),
  }),
});

/** The customer of an ERP event's JSON, or null when it names none. */
export function contactOf(value: Buffer | null): Omit<CustomerContact, 'fromEventId'> | null {
  if (value === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(value.toString('utf8'));
  } catch {
    return null;
  }
  const parsed = withCustomer.safeParse(json);
  if (!parsed.success) return null;
  const { email, phone } = parsed.data.data.customer;
  if (email === undefined && phone === undefined) return null;
  return {
    email: email ?? null,
    phone: phone === undefined ? null : `${phone.countryCode} ${phone.number}`.trim(),
  };
}

/** "j•••@example.com": the first letter and the domain. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '•••';
  return `${email.slice(0, 1)}•••${email.slice(at)}`;
}

/** "+47 ••••••67": the country code and the last two digits. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  const [code] = phone.trim().split(/\s+/, 1);
  const prefix = code?.startsWith('+') === true ? `${code} ` : '';
  return `${prefix}••••••${digits.slice(-2)}`;
}

export function masked(contact: CustomerContact): CustomerContact {
  return {
    email: contact.email === null ? null : maskEmail(contact.email),
    phone: contact.phone === null ? null : maskPhone(contact.phone),
    fromEventId: contact.fromEventId,
  };
}

export class CustomerContactQuery {
  constructor(private readonly letters = new DeadLetterRepository()) {}

  /** The newest contact the order's dead letters hold, in clear; null when none does. */
  async contact(sql: Sql, orderId: string): Promise<CustomerContact | null> {
    const letters = await this.letters.listForOrder(sql, orderId);
    const eventIds = [
      ...new Set(
        letters.flatMap((letter) => (letter.eventId === null ? [] : [letter.eventId])).reverse(),
      ),
    ];
    if (eventIds.length === 0) return null;
    const values = await this.letters.ofEvents(
      sql,
      eventIds.map((eventId) => ({ orderId, eventId })),
    );
    for (const row of values) {
      const contact = contactOf(row.value);
      if (contact !== null) return { ...contact, fromEventId: row.eventId };
    }
    return null;
  }
}
