/**
 * Checks a message as a consumer reads it from Kafka against the contracts: an envelope
 * event (x-event-type or the value's `type` names an outbound type) against its schema,
 * its headers and its key; a dead letter (x-dlq-reason) against the dead-letter headers.
 * Anything else (an ERP order event, a replayed one) is no outbound event and passes.
 * The end-to-end tests run every message they read through it.
 */
import { summarizeIssues } from '../errors/zod-issues.js';
import { deadLetterHeadersSchema } from './dead-letter-headers.schema.js';
import { eventHeadersSchema } from './event-envelope.schema.js';
import { isOutboundEventType, OUTBOUND_EVENTS } from './outbound-events.js';
import { DLQ_HEADER } from '../messaging/dead-letter-headers.js';

export interface ReadMessage {
  readonly key: string | null;
  readonly value: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** How the message breaks its contract; empty when it keeps it. */
export function outboundViolations(message: ReadMessage): string[] {
  if (message.headers[DLQ_HEADER.reason] !== undefined) {
    const headers = deadLetterHeadersSchema.safeParse(message.headers);
    return headers.success ? [] : [`dead-letter headers: ${summarizeIssues(headers.error)}`];
  }
  let value: unknown;
  try {
    value = JSON.parse(message.value);
  } catch {
    value = undefined;
  }
  const headerType = message.headers['x-event-type'];
  const bodyType = typeOf(value);
  const type = headerType ?? bodyType;
  if (type === undefined || !isOutboundEventType(type)) {
    return headerType === undefined ? [] : [`x-event-type "${headerType}" has no schema`];
  }
  const problems: string[] = [];
  const headers = eventHeadersSchema(type).safeParse(message.headers);
  if (!headers.success) problems.push(`${type} headers: ${summarizeIssues(headers.error)}`);
  const checked = OUTBOUND_EVENTS[type].check(value);
  if (!checked.ok) {
    problems.push(`${type} value: ${summarizeIssues(checked.error)}`);
  } else if (message.key !== checked.key) {
    problems.push(`${type} key: "${message.key ?? '(null)'}" instead of "${checked.key}"`);
  }
  return problems;
}

function typeOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const type: unknown = Reflect.get(value, 'type');
  return typeof type === 'string' ? type : undefined;
}
