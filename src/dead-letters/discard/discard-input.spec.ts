import { describe, expect, it } from '@jest/globals';
import {
  InvalidDiscardInputError,
  parseDiscardEventId,
  parseDiscardReason,
} from './discard-input.js';

describe('what a person gives a discard', () => {
  it('takes an event id that is a UUID, as written', () => {
    expect(parseDiscardEventId(' 6f1c2a4e-1b7d-4a8e-9c1e-0b5d1f7e2a90 ')).toBe(
      '6f1c2a4e-1b7d-4a8e-9c1e-0b5d1f7e2a90',
    );
    for (const bad of ['', 'SO-1', '6f1c2a4e-1b7d-4a8e-9c1e', '#12']) {
      expect(() => parseDiscardEventId(bad)).toThrow(InvalidDiscardInputError);
    }
  });

  it('makes the reason one line, and wants 1 to 500 characters', () => {
    expect(parseDiscardReason('  wrong\r\ncurrency,\tresent as SO-2 ')).toBe(
      'wrong currency, resent as SO-2',
    );
    expect(parseDiscardReason('æ'.repeat(500))).toHaveLength(500);
    expect(() => parseDiscardReason(' \n ')).toThrow(/1 to 500 characters/);
    expect(() => parseDiscardReason('x'.repeat(501))).toThrow(InvalidDiscardInputError);
  });
});
