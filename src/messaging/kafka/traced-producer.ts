/**
 * The outbox publish span (kind producer): one per message the relay sends, under the
 * trace of the message's own `traceparent` header (written into the outbox row by the step
 * that made the event), and the message leaves with the publish span's headers, so a
 * consumer of the status topic continues from the publish.
 *
 * Installed only when an SDK records (MessagingModule): with the SDK off the relay sends
 * the rows' headers as they are and pays nothing per message.
 */
import type { MessageProducer, OutboundMessage } from '../messaging.ports.js';
import {
  contextFromHeaders,
  traceIdOf,
  type TraceSpan,
  type Tracing,
} from '../../tracing/tracing.js';

export function tracedProducer(producer: MessageProducer, tracing: Tracing): MessageProducer {
  if (!tracing.recording) return producer;
  return {
    connect: () => producer.connect(),
    disconnect: () => producer.disconnect(),
    async send(messages: readonly OutboundMessage[]): Promise<void> {
      const spans: TraceSpan[] = [];
      const sent = messages.map((message) => {
        const parent = contextFromHeaders(message.headers);
        // Messages of no trace (none was given to their event) stay as they are.
        if (traceIdOf(parent) === undefined) return message;
        const span = tracing.start(`publish ${message.topic}`, parent, {
          kind: 'producer',
          attributes: {
            'messaging.system': 'kafka',
            'messaging.operation.type': 'send',
            'messaging.destination.name': message.topic,
            ...(message.headers?.['x-event-type'] === undefined
              ? {}
              : { 'event.type': message.headers['x-event-type'] }),
          },
        });
        spans.push(span);
        return { ...message, headers: { ...message.headers, ...span.headers() } };
      });
      try {
        await producer.send(sent);
      } catch (error) {
        for (const span of spans) span.end(error);
        throw error;
      }
      for (const span of spans) span.end();
    },
  };
}
