import { describe, expect, it } from '@jest/globals';
import { InvalidEventError } from '../errors/dead-letter.errors.js';
import { anEnvelope, paymentRequestedData } from '../../test/support/builders.js';
import {
  PAYMENT_REFERENCE_MAX_LENGTH,
  parseOrderEnvelope,
  parseOrderEvent,
} from './order-event.schema.js';

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

describe("paymentRef and externalRef: the payment's own references", () => {
  const withRefs = (refs: Record<string, unknown>) =>
    parseOrderEvent(
      anEnvelope(
        'order.payment_requested',
        // The limits are the point here: the data is built as the ERP might send it.
        { ...paymentRequestedData(), ...refs },
        { orderId: 'SO-1' },
      ),
    );

  it('are optional, trimmed, and null means not given', () => {
    expect(withRefs({}).data).not.toHaveProperty('paymentRef');
    const event = withRefs({ paymentRef: '  PAY-1 ', externalRef: 'ext/ÆØÅ 9' });
    expect(event.data.paymentRef).toBe('PAY-1');
    expect(event.data.externalRef).toBe('ext/ÆØÅ 9');
    const nulls = withRefs({ paymentRef: null, externalRef: null });
    expect(nulls.data.paymentRef).toBeNull();
    expect(nulls.data.externalRef).toBeNull();
    expect(
      withRefs({ paymentRef: 'x'.repeat(PAYMENT_REFERENCE_MAX_LENGTH) }).data.paymentRef,
    ).toHaveLength(100);
  });

  it('refuses empty, too long, control characters and non-text, naming the field', () => {
    expect(() => withRefs({ paymentRef: '   ' })).toThrow(
      new InvalidEventError(
        'invalid order.payment_requested: data.paymentRef: must not be empty ' +
          '(leave the field out or send null instead)',
      ),
    );
    expect(() => withRefs({ externalRef: 'x'.repeat(101) })).toThrow(
      new InvalidEventError(
        'invalid order.payment_requested: data.externalRef: must be at most 100 characters',
      ),
    );
    expect(() => withRefs({ paymentRef: 'PAY\n1' })).toThrow(
      /invalid order\.payment_requested: data\.paymentRef: must not contain control characters/,
    );
    expect(() => withRefs({ externalRef: 42 })).toThrow(
      /invalid order\.payment_requested: data\.externalRef: /,
    );
    expect(() => withRefs({ paymentRef: 'x'.repeat(101) })).toThrow(InvalidEventError);
  });
});
