import { describe, expect, it } from '@jest/globals';
import { oneLine } from './one-line.js';

describe('oneLine', () => {
  it('collapses whitespace into single spaces and trims', () => {
    expect(oneLine('  a\t\r\n b  ')).toBe('a b');
  });

  it('strips control characters (C0, DEL, C1, line separators)', () => {
    expect(oneLine('a\u0000b\u0008c\u001bd\u007fe\u0085f\u009bg\u2028h')).toBe('a b c d e f g h');
  });

  it('bounds the length with an ellipsis, by default at 500', () => {
    expect(oneLine('x'.repeat(50), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(oneLine('x'.repeat(600))).toHaveLength(500);
    expect(oneLine('short', 10)).toBe('short');
  });

  it('never cuts a surrogate pair in half', () => {
    expect(oneLine(`abc${'😀'.repeat(5)}`, 5)).toBe('abc…');
  });
});
