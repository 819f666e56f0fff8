import { describe, expect, it } from '@jest/globals';
import { describeError, scrubPersonalData } from './app-error.js';
import { InvalidEventError } from './dead-letter.errors.js';

describe('describeError', () => {
  it('keeps our own errors as CODE: message on one line', () => {
    expect(
      describeError(new InvalidEventError('invalid envelope:\n eventId: must be a UUID')),
    ).toBe('EVENT.INVALID: invalid envelope: eventId: must be a UUID');
  });

  it('names a foreign error with its code and scrubs e-mail addresses and long numbers', () => {
    const error = Object.assign(new Error('Key (email)=(kari@example.no) phone 4791234567'), {
      code: '23505',
    });
    expect(describeError(error)).toBe('Error 23505: Key (email)=([email]) phone [number]');
    expect(describeError(new TypeError('bad value'))).toBe('TypeError: bad value');
  });

  it('names a thrown non-Error by its type only, never its content', () => {
    expect(describeError(42)).toBe('non-error thrown: number');
    expect(describeError('kari@example.no')).toBe('non-error thrown: string');
    expect(describeError(undefined)).toBe('non-error thrown: undefined');
  });

  it('turns control characters and line breaks into spaces', () => {
    expect(describeError(new Error('a\u0000b\u0007\u001b[31mc\r\n\td\u007fe'))).toBe(
      'Error: a b [31mc d e',
    );
  });

  it('bounds the length, by default at 500', () => {
    expect(describeError(new Error('x'.repeat(1000)))).toHaveLength(500);
    expect(describeError(new Error('x'.repeat(50)), 20)).toBe(`Error: ${'x'.repeat(12)}…`);
  });
});

describe('scrubPersonalData', () => {
  it('replaces e-mail addresses', () => {
    expect(scrubPersonalData('to kari.nordmann+erp@mail.example.no, cc ola@x.io')).toBe(
      'to [email], cc [email]',
    );
  });

  it('replaces phone-like digit runs, written together or the international way', () => {
    expect(scrubPersonalData('call 4791234567 or +47 912 34 567 or +1 (555) 123-4567')).toBe(
      'call [number] or [number] or [number]',
    );
    expect(scrubPersonalData('card 4111111111111111')).toBe('card [number]');
  });

  it('leaves short numbers, dates, times and addresses readable', () => {
    const text = 'SQLSTATE 23505 on 2026-11-27 02:28:12 from 10.0.12.34:9092 after 30000 ms';
    expect(scrubPersonalData(text)).toBe(text);
  });
});
