import { describe, expect, it } from '@jest/globals';
import { InvalidEventError } from '../errors/dead-letter.errors.js';
import { parseOrderEnvelope, parseOrderEvent } from './order-event.schema.js';

const value = (text: string): Buffer => Buffer.from(text, 'utf8');
const envelopeText = (orderId: string, reason: string): string =>
  `{"eventId":"0b6f1d52-3c0e-4d0c-9f6b-4f1a3c1d2e3f","type":"order.cancelled",` +
  `"occurredAt":"2026-11-27T10:00:00Z","orderId":${JSON.stringify(orderId)},` +
  `"data":{"reason":${reason}}}`;

function parsed(text: string) {
  const envelope = parseOrderEnvelope(value(text), null);
  return parseOrderEvent(envelope as typeof envelope & { type: 'order.cancelled' });
}

describe('NUL (U+0000) in an order event, which Postgres text cannot store', () => {
  it('refuses it in an envelope field, naming the field', () => {
    expect(() => parsed(envelopeText('SO-\u0000-1', '"x"'))).toThrow(
      new InvalidEventError(
        'invalid envelope: orderId: must not contain the NUL character (U+0000)',
      ),
    );
  });

  it('refuses it deep in the data, naming the path', () => {
    expect(() => parsed(envelopeText('SO-1', '"a\\u0000b"'))).toThrow(
      /invalid order\.cancelled: data\.reason: must not contain the NUL character/,
    );
  });

  it('accepts text that only looks like the escape (an escaped backslash, then u0000)', () => {
    const event = parsed(envelopeText('SO-1', '"C:\\\\u0000"'));
    expect(event.data.reason).toBe('C:\\u0000');
  });

  it('marks an envelope whose JSON holds no NUL escape, and only such an envelope', () => {
    expect(parseOrderEnvelope(value(envelopeText('SO-1', '"x"')), null).nulFree).toBe(true);
    expect(
      parseOrderEnvelope(value(envelopeText('SO-1', '"\\\\u0000"')), null).nulFree,
    ).toBeUndefined();
  });
});

describe('supersedes: the event an ERP event replaces', () => {
  const withSupersedes = (supersedes: string): string =>
    envelopeText('SO-1', '"x"').replace(
      '"data":',
      `"supersedes":${JSON.stringify(supersedes)},"data":`,
    );

  it('is an optional event id, kept on the envelope', () => {
    expect(parseOrderEnvelope(value(envelopeText('SO-1', '"x"')), null).supersedes).toBeUndefined();
    expect(
      parseOrderEnvelope(value(withSupersedes('6f1c2a4e-1b7d-4a8e-9c1e-0b5d1f7e2a90')), null)
        .supersedes,
    ).toBe('6f1c2a4e-1b7d-4a8e-9c1e-0b5d1f7e2a90');
  });

  it('refuses one that is no UUID, or names the event itself', () => {
    expect(() => parseOrderEnvelope(value(withSupersedes('SO-0')), null)).toThrow(
      /invalid envelope: supersedes: must be a UUID/,
    );
    expect(() =>
      parseOrderEnvelope(value(withSupersedes('0b6f1d52-3c0e-4d0c-9f6b-4f1a3c1d2e3f')), null),
    ).toThrow(/supersedes: must name another event than eventId/);
  });
});
