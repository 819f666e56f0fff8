/**
 * How the generic inbound-events transport (src/messaging) reads ERP order events: this
 * folder owns the envelope, the event types and the context its handlers get, and hands
 * them to the transport as INBOUND_EVENT_CODEC, so src/messaging knows no order type.
 */
import type { InboundEventCodec, InboundMessage } from '../messaging/messaging.ports.js';
import { OrderEventContext } from './order-event.context.js';
import {
  ORDER_EVENT_TYPES,
  ORDER_ID_MAX_LENGTH,
  parseOrderEnvelope,
  type ParsedOrderEnvelope,
} from '../events/order-event.schema.js';

export const orderEventCodec: InboundEventCodec<ParsedOrderEnvelope, OrderEventContext> = {
  eventTypes: ORDER_EVENT_TYPES,
  decode(message: InboundMessage) {
    const envelope = parseOrderEnvelope(message.value, message.key);
    return {
      type: envelope.type,
      eventId: envelope.eventId,
      key: envelope.orderId,
      payload: envelope,
    };
  },
  keyOfUndecodable: orderIdOfKey,
  context: (message, attempt) => new OrderEventContext([message, attempt]),
};

/**
 * The order of a message whose envelope could not be read: its Kafka key, when that can be
 * an orderId at all. A longer key (or one holding NUL) cannot be one, so no later event of
 * that "order" can take effect to be held back; and it could not be stored as one either (a
 * Postgres index row has a size limit, text holds no NUL): the dead letter is kept without.
 */
function orderIdOfKey(key: Buffer | null): string | null {
  if (key === null || key.length > ORDER_ID_MAX_LENGTH * 4) return null;
  const text = key.toString('utf8');
  return [...text].length <= ORDER_ID_MAX_LENGTH && !text.includes('\u0000') ? text : null;
}
