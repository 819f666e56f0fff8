import { describe, expect, it } from '@jest/globals';
import { chunksByBytes } from './kafka.producer.js';
import type { OutboundMessage } from './messaging.ports.js';

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
