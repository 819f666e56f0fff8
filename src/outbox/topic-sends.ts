/**
 * A relay pass's send: one send per topic, the topics at once. A topic can fail alone (its
 * WRITE withdrawn, its partitions' leaders away): its rows stay pending and are retried,
 * while the other topics' rows are published. A key's rows of one topic go in one send, in
 * id order, so their order holds.
 */
import type { MessageProducer, OutboundMessage } from '../messaging/messaging.ports.js';
import type { PendingOutboxMessage } from './outbox.repository.js';

/** Sends `rows` (in id order); returns the topics whose send failed, with their error. */
export async function sendByTopic(
  producer: MessageProducer,
  rows: readonly PendingOutboxMessage[],
): Promise<Map<string, unknown>> {
  const byTopic = new Map<string, OutboundMessage[]>();
  for (const row of rows) {
    const list = byTopic.get(row.topic);
    if (list === undefined) byTopic.set(row.topic, [toOutboundMessage(row)]);
    else list.push(toOutboundMessage(row));
  }
  const failed = new Map<string, unknown>();
  await Promise.all(
    [...byTopic].map(async ([topic, messages]) => {
      try {
        await producer.send(messages);
      } catch (error) {
        failed.set(topic, error);
      }
    }),
  );
  return failed;
}

function toOutboundMessage(row: PendingOutboxMessage): OutboundMessage {
  return { topic: row.topic, key: row.key, value: row.value, headers: row.headers };
}
