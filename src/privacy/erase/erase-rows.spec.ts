import type { LetterPersonalData } from '../../dead-letters/dead-letter.repository.js';
import type { WebhookPersonalData } from '../../webhooks/inbox/webhook-inbox.repository.js';
import { ERASED, parseJson } from '../personal-json.js';
import { eraseHeaders, eraseLetter, eraseWebhook, erasedValuesOf } from './erase-rows.js';

const EVENT = {
  eventId: '8f0c2f7e-5a1b-4c3d-9e8f-0a1b2c3d4e5f',
  type: 'order.payment_requested',
  orderId: 'SO-1',
  data: { customer: { email: 'kari@example.no', lastName: 'Nordmann' }, currency: 'NOK' },
};

function letter(overrides: Partial<LetterPersonalData> = {}): LetterPersonalData {
  return {
    id: '7',
    eventId: EVENT.eventId,
    eventType: EVENT.type,
    reason: 'rejected_by_payflow',
    error: 'Payflow 422: customer Nordmann has no valid e-mail',
    failedAt: new Date('2026-11-20T10:00:00Z'),
    erasedAt: null,
    discardReason: null,
    value: Buffer.from(JSON.stringify(EVENT)),
    headers: {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'x-dlq-error': 'Payflow 422: customer Nordmann has no valid e-mail',
      'x-dlq-original-offset': '123456789',
      'x-erp-user': 'kari@example.no',
    },
    ...overrides,
  };
}

describe('eraseLetter', () => {
  it('scrubs the event, sweeps the error and headers of what it erased, keeps ids', () => {
    const row = letter();
    const erased = erasedValuesOf([row.value]);
    const next = eraseLetter(row, erased);
    expect(next).not.toBeNull();
    expect(parseJson(next?.value ?? Buffer.alloc(0))).toEqual({
      ...EVENT,
      data: { customer: { email: ERASED, lastName: ERASED }, currency: 'NOK' },
    });
    expect(next?.error).toBe(`Payflow 422: customer ${ERASED} has no valid e-mail`);
    expect(next?.headers).toEqual({
      traceparent: row.headers.traceparent,
      'x-dlq-error': `Payflow 422: customer ${ERASED} has no valid e-mail`,
      // An offset, not a phone number: only the error is scrubbed of long numbers.
      'x-dlq-original-offset': '123456789',
      'x-erp-user': ERASED,
    });
  });

  it('returns null for a letter with nothing left to erase (a second erasure writes nothing)', () => {
    const row = letter();
    const erased = erasedValuesOf([row.value]);
    const next = eraseLetter(row, erased);
    if (next === null) throw new Error('expected an erasure');
    const again = letter({ ...next, erasedAt: new Date() });
    expect(eraseLetter(again, erasedValuesOf([again.value]))).toBeNull();
  });

  it('marks the event erased only when the event itself lost data', () => {
    const row = letter();
    expect(eraseLetter(row, erasedValuesOf([row.value]))?.eventErased).toBe(true);
    const plain = letter({
      value: Buffer.from(JSON.stringify({ ...EVENT, data: { currency: 'NOK' } })),
      error: 'Payflow 500 for kari@example.no',
      headers: {},
    });
    const next = eraseLetter(plain, erasedValuesOf([plain.value]));
    expect(next?.eventErased).toBe(false);
    expect(next?.error).toBe('Payflow 500 for [email]');
  });

  it('leaves a tombstone (no value) a tombstone', () => {
    expect(eraseLetter(letter({ value: null, error: 'x', headers: {} }), new Set())).toBeNull();
  });
});

describe('eraseWebhook', () => {
  const webhook: WebhookPersonalData = {
    id: '3',
    paymentId: '5b3c0e4e-0000-4000-8000-000000000001',
    kind: 'payment',
    receivedAt: new Date(),
    body: Buffer.from(
      JSON.stringify({ paymentId: 'p-1', paymentStatus: 'PAID', payer: { name: 'Kari' } }),
    ),
    headers: { 'x-payflow-delivery': 'd-1', 'user-agent': 'Payflow/1.0' },
  };

  it('keeps ids and statuses of the body, and only the headers known to be harmless', () => {
    const next = eraseWebhook(webhook, new Set());
    expect(parseJson(next?.bytes ?? Buffer.alloc(0))).toEqual({
      paymentId: 'p-1',
      paymentStatus: 'PAID',
      payer: { name: ERASED },
    });
    expect(next?.headers).toEqual({ 'x-payflow-delivery': 'd-1', 'user-agent': ERASED });
  });
});

describe('eraseHeaders', () => {
  it('keeps trace context and event types as they are', () => {
    const headers = { 'content-type': 'application/json', 'x-event-type': 'payment.created' };
    expect(eraseHeaders(headers, new Set(['Kari']))).toEqual(headers);
  });
});
