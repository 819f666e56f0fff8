/**
 * What one stored row becomes when an order's personal data is erased, decided without I/O:
 * the message bytes scrubbed (personal-json.ts), the texts that may quote them (errors,
 * header values, a discard's reason) swept of every value erased anywhere in the order, the
 * headers kept only by name when their name is known to carry nothing personal. Each
 * function returns null when the row holds nothing left to erase, so a second erasure
 * writes nothing.
 */
import { scrubPersonalData } from '../../errors/app-error.js';
import type {
  ErasedLetter,
  LetterPersonalData,
} from '../../dead-letters/dead-letter.repository.js';
import type { ErasedOutboxRow, OutboxPersonalData } from '../../outbox/outbox.repository.js';
import type {
  ErasedWebhook,
  WebhookPersonalData,
} from '../../webhooks/inbox/webhook-inbox.repository.js';
import { ERASED, scrubBytes, sweepText } from '../personal-json.js';

/**
 * Header names whose values name no person: trace context, content and event types,
 * Payflow's delivery id, the organization. `x-dlq-*` (the dead-letter headers) are kept too,
 * swept like every kept value.
 */
const KEPT_HEADERS: ReadonlySet<string> = new Set([
  'traceparent',
  'tracestate',
  'content-type',
  'x-event-type',
  'x-payflow-delivery',
  'x-organization-id',
]);
const DLQ_PREFIX = 'x-dlq-';
/** The error a dead letter failed with, which may quote the event. */
const DLQ_ERROR = 'x-dlq-error';

/** The values scrubbing the order's stored messages erases: what other texts are swept of. */
export function erasedValuesOf(
  messages: readonly (Buffer | null)[],
  extra: readonly (string | null)[] = [],
): Set<string> {
  const values = new Set<string>();
  for (const message of messages) {
    if (message === null) continue;
    for (const value of scrubBytes(message).erased) values.add(value);
  }
  for (const value of extra) if (value !== null && value !== ERASED) values.add(value);
  return values;
}

/** A text that may quote the order's personal data: swept, then e-mail and long numbers. */
export function eraseText(text: string, erased: ReadonlySet<string>): string {
  return scrubPersonalData(sweepText(text, erased));
}

/**
 * Headers: kept names swept (the error also of e-mail addresses and long numbers), other
 * values replaced with ERASED (the name stays).
 */
export function eraseHeaders(
  headers: Readonly<Record<string, unknown>>,
  erased: ReadonlySet<string>,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === null || value === undefined) {
      result[name] = value;
    } else if (lower === DLQ_ERROR) {
      result[name] = typeof value === 'string' ? eraseText(value, erased) : value;
    } else if (KEPT_HEADERS.has(lower) || lower.startsWith(DLQ_PREFIX)) {
      result[name] = typeof value === 'string' ? sweepText(value, erased) : value;
    } else {
      result[name] = ERASED;
    }
  }
  return result;
}

function sameHeaders(
  a: Readonly<Record<string, unknown>>,
  b: Readonly<Record<string, unknown>>,
): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A dead letter erased, or null when nothing in it is left to erase. */
export function eraseLetter(
  letter: LetterPersonalData,
  erased: ReadonlySet<string>,
): ErasedLetter | null {
  const scrubbed = letter.value === null ? null : scrubBytes(letter.value);
  const error = eraseText(letter.error, erased);
  const headers = eraseHeaders(letter.headers, erased);
  const discardReason =
    letter.discardReason === null ? null : eraseText(letter.discardReason, erased);
  const changed =
    scrubbed?.changed === true ||
    error !== letter.error ||
    discardReason !== letter.discardReason ||
    !sameHeaders(headers, letter.headers);
  if (!changed) return null;
  return {
    id: letter.id,
    value: scrubbed?.bytes ?? null,
    // Only a letter whose event lost data is never replayed; one whose error alone quoted
    // something still holds the ERP's event as sent.
    eventErased: scrubbed?.changed === true,
    error,
    headers,
    discardReason,
  };
}

/** An outbox row (a status event, a `.dlq` copy, a replayed event) erased, or null. */
export function eraseOutboxRow(
  row: OutboxPersonalData,
  erased: ReadonlySet<string>,
): ErasedOutboxRow | null {
  const scrubbed = scrubBytes(row.value);
  const headers = eraseHeaders(row.headers, erased);
  if (!scrubbed.changed && sameHeaders(headers, row.headers)) return null;
  return { id: row.id, bytes: scrubbed.bytes, headers };
}

/** A stored webhook (its body and request headers) erased, or null. */
export function eraseWebhook(
  row: WebhookPersonalData,
  erased: ReadonlySet<string>,
): ErasedWebhook | null {
  const scrubbed = scrubBytes(row.body);
  const headers = eraseHeaders(row.headers, erased);
  if (!scrubbed.changed && sameHeaders(headers, row.headers)) return null;
  return { id: row.id, bytes: scrubbed.bytes, headers };
}
