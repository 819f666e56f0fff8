import { describe, expect, it } from '@jest/globals';
import { amountView } from './order-show.query.js';
import { sanitizeText } from '../masking/sanitize-text.js';
import { renderTable } from './order-show.view.js';

describe('order show formatting', () => {
  it('prints minor units as exact decimal text in the currency', () => {
    expect(amountView('124950', 'NOK')).toEqual({ amount: '1249.50', currency: 'NOK' });
    expect(amountView('5', 'NOK')).toEqual({ amount: '0.05', currency: 'NOK' });
    expect(amountView('-1000', 'EUR')).toEqual({ amount: '-10.00', currency: 'EUR' });
    expect(amountView('1500', 'JPY')).toEqual({ amount: '1500', currency: 'JPY' });
    expect(amountView('1234', 'KWD')).toEqual({ amount: '1.234', currency: 'KWD' });
    expect(amountView('9007199254740991', 'NOK')).toEqual({
      amount: '90071992547409.91',
      currency: 'NOK',
    });
    // Beyond a float's exact integers: formatted from the text, no float on the way.
    expect(amountView('123456789012345678901', 'NOK')).toEqual({
      amount: '1234567890123456789.01',
      currency: 'NOK',
    });
    expect(amountView('12.5', 'NOK')).toEqual({ amount: '12.5 minor units', currency: 'NOK' });
    expect(amountView('42', 'ZZZ')).toEqual({ amount: '42 minor units', currency: 'ZZZ' });
  });

  it('masks emails, phone numbers and secrets in free text', () => {
    expect(sanitizeText('customer ola@example.no, +47 912 34 567, order 10042 of 1249.50')).toBe(
      'customer [email], [phone], order 10042 of 1249.50',
    );
    expect(sanitizeText('https://x.test/cb?api_key=abc123&kind=status')).toBe(
      'https://x.test/cb?api_key=[redacted]&kind=status',
    );
    expect(sanitizeText('Authorization: Bearer eyJhbGciOi.x.y')).toBe(
      'Authorization: Bearer [redacted]',
    );
  });

  it('pads table columns to their widest cell', () => {
    expect(renderTable(['a', 'long header'], [['wide cell', 'x']], '')).toEqual([
      'a          long header',
      '---------  -----------',
      'wide cell  x',
    ]);
  });
});
