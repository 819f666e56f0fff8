import { describe, expect, it } from '@jest/globals';
import { identityOfValue } from './letter-identity.js';

const ID = '6f1c2a4e-1b7d-4a8e-9c1e-0b5d1f7e2a90';
const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('the identity an unreadable envelope still names', () => {
  it('reads the event id and a known type out of an envelope that breaks the contract', () => {
    expect(identityOfValue(bytes(`{"eventId":"${ID}","type":"order.cancelled"}`))).toEqual({
      eventId: ID,
      eventType: 'order.cancelled',
    });
    expect(identityOfValue(bytes(`{"eventId":"${ID}","type":"order.unknown","x":1}`))).toEqual({
      eventId: ID,
      eventType: null,
    });
  });

  it('names nothing for a value without a UUID event id, not JSON, not UTF-8, or empty', () => {
    for (const value of [
      bytes('{"eventId":"not-a-uuid"}'),
      bytes('[1,2]'),
      bytes('{not json'),
      Buffer.from([0xff, 0xfe, 0x7b]),
      Buffer.alloc(0),
      null,
    ]) {
      expect(identityOfValue(value)).toBeNull();
    }
  });
});
