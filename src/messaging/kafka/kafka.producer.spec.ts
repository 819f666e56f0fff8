import { describe, expect, it } from '@jest/globals';
import { capturingLogger } from '../../../test/support/capturing-logger.js';
import {
  KafkaMessageProducer,
  chunksByBytes,
  isProducerStateLost,
  unacknowledged,
} from './kafka.producer.js';
import type { OutboundMessage } from '../messaging.ports.js';

const of = (id: string, bytes: number): OutboundMessage => ({
  topic: 't',
  key: null,
  value: Buffer.alloc(bytes),
  headers: { id },
});
const ids = (chunks: OutboundMessage[][]): string[][] =>
  chunks.map((chunk) => chunk.map((message) => message.headers?.id ?? ''));

describe('chunksByBytes', () => {
  it('keeps small messages in one request', () => {
    expect(ids(chunksByBytes([of('a', 10), of('b', 10), of('c', 10)], 1_000))).toEqual([
      ['a', 'b', 'c'],
    ]);
  });

  it('splits in order at the limit and sends a larger message alone', () => {
    // Each costs its value + 'id'.length + 1 = bytes + 3.
    const messages = [of('a', 400), of('b', 400), of('c', 5_000), of('d', 100), of('e', 600)];
    expect(ids(chunksByBytes(messages, 1_000))).toEqual([['a', 'b'], ['c'], ['d', 'e']]);
  });

  it('makes no request for nothing', () => {
    expect(chunksByBytes([], 1_000)).toEqual([]);
  });
});

describe('isProducerStateLost', () => {
  const protocolError = (type: string): Error => Object.assign(new Error(type), { type });

  it('knows the broker answers after which an idempotent producer must be replaced', () => {
    expect(isProducerStateLost(protocolError('OUT_OF_ORDER_SEQUENCE_NUMBER'))).toBe(true);
    expect(isProducerStateLost(protocolError('UNKNOWN_PRODUCER_ID'))).toBe(true);
    // kafkajs wraps the broker's answer when its retries are used up.
    const exhausted = Object.assign(new Error('retries exhausted'), {
      originalError: protocolError('INVALID_PRODUCER_EPOCH'),
    });
    expect(isProducerStateLost(exhausted)).toBe(true);
  });

  it('leaves ordinary failures to the caller’s retry', () => {
    expect(isProducerStateLost(protocolError('NOT_LEADER_FOR_PARTITION'))).toBe(false);
    expect(isProducerStateLost(new Error('Connection error: ECONNREFUSED'))).toBe(false);
    expect(isProducerStateLost('not an error')).toBe(false);
  });
});

describe('unacknowledged', () => {
  const round = [
    { topic: 'a', partition: 0 },
    { topic: 'a', partition: 1 },
    { topic: 'b', partition: 0 },
  ];

  it('finds the partition an answer left out (kafkajs issue 1303) and one with an error', () => {
    const answers = [
      { topicName: 'a', partition: 0, errorCode: 0 },
      { topicName: 'b', partition: 0, errorCode: 6 },
    ];
    expect(unacknowledged(round, answers)).toEqual([
      { topic: 'a', partition: 1 },
      { topic: 'b', partition: 0 },
    ]);
  });

  it('is empty when every partition is acknowledged', () => {
    const answers = round.map((group) => ({
      topicName: group.topic,
      partition: group.partition,
      errorCode: 0,
    }));
    expect(unacknowledged(round, answers)).toEqual([]);
  });
});

describe('KafkaMessageProducer', () => {
  it('names its partitioner, so kafkajs has no default to warn about at start', () => {
    const logs = capturingLogger();
    // Nothing connects: kafkajs warns, if at all, when the producer is made.
    new KafkaMessageProducer({ brokers: ['127.0.0.1:1'], clientId: 'spec', logger: logs.logger });
    expect(logs.text()).not.toMatch(/partitioner/i);
  });
});
