/**
 * The published contracts (CONTRACT §8), generated from the zod schemas by
 * `npm run docs:contracts` (scripts/docs-contracts.mjs) into docs/contracts/:
 *
 * - events/<type>.schema.json: one JSON Schema (2020-12) per event type, the ERP order
 *   events read from TOPIC_ORDERS and every event OUTBOUND_EVENTS publishes, and
 *   events/dead_letter.headers.schema.json for the headers of a dead letter;
 * - asyncapi.yaml: AsyncAPI 3.0 of the four topics, their keys, headers and messages.
 *
 * Objects are left open in the published schemas (no `additionalProperties: false`):
 * fields may be added to an event, never renamed or removed. test/contracts fails when the
 * files on disk are not what this module generates.
 */
import { z } from 'zod';
import {
  envelopeSchema,
  ORDER_EVENT_DATA_SCHEMAS,
  ORDER_EVENT_TYPES,
  type OrderEventType,
} from './order-event.schema.js';
import { deadLetterHeadersSchema } from './dead-letter-headers.schema.js';
import { eventHeadersSchema } from './event-envelope.schema.js';
import { OUTBOUND_EVENT_TYPES, OUTBOUND_EVENTS, type OutboundTopic } from './outbound-events.js';
import { toYaml, type JsonValue } from './yaml.js';

export const CONTRACTS_DIR = 'docs/contracts';

/** A generated file, its path relative to CONTRACTS_DIR. */
export interface ContractFile {
  readonly path: string;
  readonly content: string;
}

/** Formats a generated file the way the repository does (prettier), given its path. */
export type ContractFormatter = (content: string, path: string) => Promise<string>;

type JsonObject = { [key: string]: JsonValue };

const DEAD_LETTER_HEADERS_FILE = 'events/dead_letter.headers.schema.json';
const KAFKA_BINDING_VERSION = '0.5.0';

/** What each ERP order event asks for (CONTRACT §2). */
const ORDER_EVENT_SUMMARIES: Record<OrderEventType, string> = {
  'order.payment_requested': 'Create a payment at Payflow for the order.',
  'order.cancelled': "Cancel the order's latest payment.",
  'order.refund_requested': "Refund (part of) the order's latest payment.",
  'order.installment_added': 'Add an installment to the payment.',
  'order.installment_changed': 'Change an installment of the payment.',
  'order.installment_removed': 'Remove an installment of the payment.',
  'order.marked_paid': 'Mark the payment paid by hand.',
  'order.payment_resend_requested': 'Send the payment again to a payment method.',
  'order.document_attached': 'Upload a document to the payment.',
  'order.document_removed': 'Delete a document of the payment.',
  'order.terminal_receipt_requested': 'Print a receipt on a payment terminal.',
};

/** The schema of a whole ERP order event of one type: the envelope with its data. */
export function orderEventSchema(type: OrderEventType): z.ZodType {
  return envelopeSchema
    .extend({ type: z.literal(type), data: ORDER_EVENT_DATA_SCHEMAS[type] })
    .meta({ title: type, description: ORDER_EVENT_SUMMARIES[type] });
}

/** Headers payflow-bridge reads from an ERP order event (CONTRACT §8); others are kept. */
const orderEventHeadersSchema = z.looseObject({
  traceparent: z.string().optional().describe('W3C Trace Context'),
  tracestate: z.string().optional().describe('W3C Trace Context'),
});

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const generated = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    // Open objects: consumers must accept fields added later.
    override: ({ jsonSchema: node }) => {
      if (node.additionalProperties === false) delete node.additionalProperties;
    },
  });
  return JSON.parse(JSON.stringify(generated)) as JsonObject;
}

/** A schema to embed in the AsyncAPI document (no `$schema` of its own). */
function embedded(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const { $schema: _dialect, ...rest } = jsonSchema(schema, io);
  return rest;
}

const schemaFile = (type: string): string => `events/${type}.schema.json`;
const json = (value: JsonValue): string => `${JSON.stringify(value, null, 2)}\n`;

function kafkaKey(description: string): JsonObject {
  return { kafka: { key: { type: 'string', description }, bindingVersion: KAFKA_BINDING_VERSION } };
}

const TOPIC_CHANNELS: Record<OutboundTopic, string> = {
  paymentStatus: 'paymentStatus',
  settlements: 'settlements',
};

function asyncApi(): JsonObject {
  const messages: JsonObject = {};
  const channelMessages: Record<string, JsonObject> = {
    orders: {},
    ordersDeadLetters: {},
    paymentStatus: {},
    settlements: {},
  };
  const add = (channel: string, name: string, message: JsonObject): void => {
    messages[name] = message;
    const refs = channelMessages[channel] ?? {};
    refs[name] = { $ref: `#/components/messages/${name}` };
    channelMessages[channel] = refs;
  };
  for (const type of ORDER_EVENT_TYPES) {
    add('orders', type, {
      name: type,
      title: type,
      summary: ORDER_EVENT_SUMMARIES[type],
      contentType: 'application/json',
      headers: embedded(orderEventHeadersSchema, 'input'),
      payload: { $ref: schemaFile(type) },
      bindings: kafkaKey('the ERP order id; must equal orderId'),
    });
  }
  add('ordersDeadLetters', 'dead_letter', {
    name: 'dead_letter',
    title: 'dead letter',
    summary: 'An order event that could not take effect, with the reason in its headers.',
    description:
      'The original key and value, byte for byte (normally an ERP order event, but whatever ' +
      'was read, also a value that is not JSON), the original headers and the x-dlq-* headers.',
    contentType: 'application/octet-stream',
    headers: { $ref: DEAD_LETTER_HEADERS_FILE },
    payload: { description: 'the original message value, unchanged' },
    bindings: kafkaKey('the original key, unchanged (the ERP order id)'),
  });
  for (const type of OUTBOUND_EVENT_TYPES) {
    const spec = OUTBOUND_EVENTS[type];
    add(TOPIC_CHANNELS[spec.topic], type, {
      name: type,
      title: type,
      summary: spec.schema.description ?? type,
      contentType: 'application/json',
      headers: embedded(eventHeadersSchema(type), 'output'),
      payload: { $ref: schemaFile(type) },
      bindings: kafkaKey(spec.keyDescription),
    });
  }
  const channel = (
    name: string,
    address: string,
    title: string,
    description: string,
  ): JsonObject => ({
    address,
    title,
    description,
    messages: channelMessages[name] ?? {},
  });
  const operation = (action: 'send' | 'receive', name: string, summary: string): JsonObject => ({
    action,
    channel: { $ref: `#/channels/${name}` },
    summary,
    messages: Object.keys(channelMessages[name] ?? {}).map((message) => ({
      $ref: `#/channels/${name}/messages/${message}`,
    })),
  });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'payflow-bridge',
      version: '1.1.0',
      description:
        'The Kafka topics of payflow-bridge: ERP order events in; payment status events, ' +
        'settlement events and dead letters out. Addresses are the default topic names; ' +
        'each is set by its environment variable. Every value is UTF-8 JSON except a dead ' +
        "letter's, which is the original bytes. Generated from the code's zod schemas by " +
        '`npm run docs:contracts`: do not edit by hand.',
    },
    defaultContentType: 'application/json',
    channels: {
      orders: channel(
        'orders',
        'erp.orders.v1',
        'ERP order events (TOPIC_ORDERS)',
        'Keyed by the ERP order id. Events of one order take effect in the order they were ' +
          'published; a redelivered eventId changes nothing.',
      ),
      ordersDeadLetters: channel(
        'ordersDeadLetters',
        'erp.orders.v1.dlq',
        'Dead letters (${TOPIC_ORDERS}.dlq)',
        'Order events that cannot take effect, unchanged, with x-dlq-* headers. Later events ' +
          'of a dead-lettered order follow it (blocked_by_earlier_failure), so a replay keeps ' +
          'their order.',
      ),
      paymentStatus: channel(
        'paymentStatus',
        'payflow.payment-status.v1',
        'Payment status events (TOPIC_PAYMENT_STATUS)',
        'Keyed by the ERP order id, in order per order. At least once: deduplicate on eventId.',
      ),
      settlements: channel(
        'settlements',
        'payflow.settlements.v1',
        'Settlement events (TOPIC_SETTLEMENTS)',
        'One settlement.line per good row of a nightly settlement file, then one ' +
          'settlement.file_available; data.fileId joins them. The reconciliation adds one ' +
          'settlement.exception per finding (keyed by the Payflow payment id) and ' +
          'settlement.reconciled totals (keyed by the organization). At least once: ' +
          'deduplicate on eventId.',
      ),
    },
    operations: {
      receiveOrderEvents: operation('receive', 'orders', 'payflow-bridge consumes order events'),
      sendDeadLetters: operation(
        'send',
        'ordersDeadLetters',
        'payflow-bridge dead-letters what cannot take effect',
      ),
      sendPaymentStatusEvents: operation(
        'send',
        'paymentStatus',
        'payflow-bridge publishes payment status events',
      ),
      sendSettlementEvents: operation(
        'send',
        'settlements',
        'payflow-bridge publishes settlement events',
      ),
    },
    components: { messages },
  };
}

/** Every file of docs/contracts, formatted, sorted by path. */
export async function renderContracts(
  format: ContractFormatter = (content) => Promise.resolve(content),
): Promise<ContractFile[]> {
  const raw: ContractFile[] = [
    ...ORDER_EVENT_TYPES.map((type) => ({
      path: schemaFile(type),
      content: json(jsonSchema(orderEventSchema(type), 'input')),
    })),
    ...OUTBOUND_EVENT_TYPES.map((type) => ({
      path: schemaFile(type),
      content: json(jsonSchema(OUTBOUND_EVENTS[type].schema, 'output')),
    })),
    {
      path: DEAD_LETTER_HEADERS_FILE,
      content: json(jsonSchema(deadLetterHeadersSchema, 'output')),
    },
    { path: 'asyncapi.yaml', content: toYaml(asyncApi()) },
  ];
  const files = await Promise.all(
    raw.map(async (file) => ({
      path: file.path,
      content: await format(file.content, `${CONTRACTS_DIR}/${file.path}`),
    })),
  );
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
