import { describe, expect, it } from '@jest/globals';
import { outboxKeyText } from './outbox.repository.js';

describe('outboxKeyText', () => {
  it('keeps a UTF-8 key as it is, and null as null', () => {
    expect(outboxKeyText('CH-1')).toBe('CH-1');
    expect(outboxKeyText(Buffer.from('ordre-ø'))).toBe('ordre-ø');
    expect(outboxKeyText(null)).toBeNull();
  });

  it('turns NUL and bytes that are not UTF-8 into U+FFFD, which Postgres text can hold', () => {
    expect(outboxKeyText('CH\u00001')).toBe('CH\uFFFD1');
    expect(outboxKeyText(Buffer.from([0x43, 0x00, 0xff]))).toBe('C\uFFFD\uFFFD');
  });
});
