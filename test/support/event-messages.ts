/**
 * Outbox messages of events built without OutboxWriter, for specs that look at the wire
 * shape of one event. Only tests use them: in src every event goes through the writer,
 * which checks it against its schema.
 */
import { eventMessage, stampEvent } from '../../src/events/event-message.js';
import type { OutboundMessage } from '../../src/messaging/messaging.ports.js';
import type { StatusEvent } from '../../src/payments/payment-status-events.js';
import type { SettlementLine } from '../../src/settlements/csv/settlement-row.js';
import {
  settlementFileEvent,
  settlementLineEvent,
  type StoredSettlementFile,
} from '../../src/settlements/settlement-events.js';

/** The outbox message of a status event, with a fresh event id. */
export function statusEventMessage(
  topic: string,
  event: StatusEvent,
  now: Date = new Date(),
): OutboundMessage {
  return eventMessage(topic, event.orderId, stampEvent(event, now));
}

/** The message of a `settlement.line`, keyed by the row's payment (else by its file). */
export function settlementLineMessage(
  topic: string,
  file: { readonly fileId: string; readonly organizationId: string },
  lineNumber: number,
  line: SettlementLine,
  orderId: string | null,
  now: Date = new Date(),
): OutboundMessage {
  return eventMessage(
    topic,
    line.paymentId ?? file.fileId,
    stampEvent(settlementLineEvent(file, lineNumber, line, orderId), now),
  );
}

/** The message of a `settlement.file_available`, keyed by the organization. */
export function settlementFileMessage(
  topic: string,
  file: StoredSettlementFile,
  now: Date = new Date(),
): OutboundMessage {
  return eventMessage(topic, file.organizationId, stampEvent(settlementFileEvent(file), now));
}
