import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  MAX_EXACT_MINOR_UNITS,
  MappingError,
  fromWireAmount,
  fromWireCreatePayment,
  fromWireDocument,
  fromWireInstallment,
  fromWirePaymentStatus,
  fromWireRefund,
  toWireAmount,
  toWireCreateInstallment,
  toWireCreatePayment,
  toWireRefund,
  toWireUpdateInstallment,
} from './payflow.mapping.js';
import {
  cancelPaymentResponseSchema,
  createPaymentSchema,
  documentSchema,
  installmentRecordSchema,
  paymentStatusResponseSchema,
  refundResponseSchema,
  refundSchema,
  updateInstallmentSchema,
  type InstallmentRecord,
} from './payflow.schemas.js';
import type { CreatePaymentInput } from '../payflow.types.js';

const record = (overrides: Partial<InstallmentRecord> = {}): InstallmentRecord =>
  installmentRecordSchema.parse({
    id: 'a'.repeat(24),
    date: '2026-12-01',
    type: 'initial',
    grossAmount: 1249.5,
    status: 'CREATED',
    numTried: 0,
    successfullyChargedAt: null,
    numFailed: 0,
    lastFailedAt: null,
    ...overrides,
  });

/** The fields of an item that are not money: sent as given. */
const ITEM_PASSED_THROUGH = {
  description: 'Service',
  quantity: 2,
  taxRate: 25,
  discountRate: 0,
  lineType: 'regular',
} as const;

function paymentInput(currency: string): CreatePaymentInput {
  return {
    customer: { type: 'person', firstName: 'Kari', email: 'kari@example.com' },
    order: { orderNumber: 'SO-1', objects: [{ type: 'newCar', brand: 'Volvo' }] },
    payment: {
      currency,
      totalGrossAmountMinor: 156_250,
      totalNetAmountMinor: 125_000,
      dueDate: '2026-12-01',
      internalRef: 'SO-1',
      items: [
        {
          netUnitPriceMinor: 62_500,
          grossUnitPriceMinor: 78_125,
          netTotalPriceMinor: 125_000,
          grossTotalPriceMinor: 156_250,
          vatAmountMinor: 31_250,
          ...ITEM_PASSED_THROUGH,
        },
      ],
      installments: [
        { date: '2026-12-01', grossAmountMinor: 78_126 },
        { date: '2027-01-01', grossAmountMinor: 78_124 },
      ],
    },
    paymentMethodId: null,
    communication: { send_payment_link: true },
  };
}

describe('toWireAmount / fromWireAmount', () => {
  it.each([
    [124_950, 'NOK', 1249.5],
    [5, 'NOK', 0.05],
    [0, 'NOK', 0],
    [-1999, 'SEK', -19.99],
    [1500, 'JPY', 1500],
    [1_234_567, 'KWD', 1234.567],
    [1, 'KWD', 0.001],
  ])('%d minor %s ↔ %d', (minor, currency, json) => {
    expect(toWireAmount(minor, currency, 'x')).toBe(json);
    expect(fromWireAmount(json, currency, 'x')).toBe(minor);
  });

  it('refuses a fraction of a minor unit, non-integers and unsafe sizes', () => {
    expect(() => toWireAmount(1.5, 'NOK', 'amount')).toThrow(MappingError);
    expect(() => toWireAmount(Number.NaN, 'NOK', 'amount')).toThrow(/integer amount/);
    expect(() => toWireAmount(MAX_EXACT_MINOR_UNITS + 1, 'NOK', 'amount')).toThrow(/too large/);
    expect(() => fromWireAmount(1.005, 'NOK', 'grossAmount')).toThrow(
      /grossAmount is not an exact amount of NOK/,
    );
    expect(() => fromWireAmount(0.5, 'JPY', 'grossAmount')).toThrow(MappingError);
  });

  // The property the bridge relies on: whatever integer it sends, Payflow's JSON text carries
  // the exact decimal, and the answer converts back to the same integer.
  it.each(['NOK', 'JPY', 'KWD', 'EUR', 'BHD', 'ISK'])(
    'minor → JSON number → JSON text → minor round-trips (%s)',
    (currency) => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.integer({ min: -1_000_000, max: 1_000_000 }),
            fc.integer({ min: -MAX_EXACT_MINOR_UNITS, max: MAX_EXACT_MINOR_UNITS }),
          ),
          (minor) => {
            const wire = toWireAmount(minor, currency, 'amount');
            const text = JSON.stringify({ amount: wire });
            const back = JSON.parse(text) as { amount: number };
            expect(fromWireAmount(back.amount, currency, 'amount')).toBe(minor);
          },
        ),
        { numRuns: 2000 },
      );
    },
  );

  it('the JSON text never has more decimals than the currency allows', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -MAX_EXACT_MINOR_UNITS, max: MAX_EXACT_MINOR_UNITS }),
        fc.constantFrom<[string, number]>(['NOK', 2], ['JPY', 0], ['KWD', 3]),
        (minor, [currency, decimals]) => {
          const text = JSON.stringify(toWireAmount(minor, currency, 'amount'));
          const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
          expect(text).not.toMatch(/e/i);
          expect(fraction.length).toBeLessThanOrEqual(decimals);
        },
      ),
    );
  });
});

describe('toWireCreatePayment', () => {
  it('converts every amount with the currency decimals and passes the rest through', () => {
    const wire = toWireCreatePayment(paymentInput('NOK'));
    expect(wire.payment).toEqual({
      currency: 'NOK',
      totalGrossAmount: 1562.5,
      totalNetAmount: 1250,
      dueDate: '2026-12-01',
      internalRef: 'SO-1',
      items: [
        {
          ...ITEM_PASSED_THROUGH,
          netUnitPrice: 625,
          grossUnitPrice: 781.25,
          netTotalPrice: 1250,
          grossTotalPrice: 1562.5,
          vatAmount: 312.5,
        },
      ],
      installments: [
        { date: '2026-12-01', grossAmount: 781.26 },
        { date: '2027-01-01', grossAmount: 781.24 },
      ],
    });
    expect(wire.customer).toEqual({ type: 'person', firstName: 'Kari', email: 'kari@example.com' });
    expect(wire.paymentMethodId).toBeNull();
    expect(createPaymentSchema.safeParse(wire).success).toBe(true);
  });

  it('uses 0 decimals for JPY and 3 for KWD', () => {
    expect(toWireCreatePayment(paymentInput('JPY')).payment.totalGrossAmount).toBe(156_250);
    expect(toWireCreatePayment(paymentInput('KWD')).payment.totalGrossAmount).toBe(156.25);
    expect(toWireCreatePayment(paymentInput('KWD')).payment.items?.[0]?.vatAmount).toBe(31.25);
  });

  it('keeps explicit nulls (installments, item totals) and omits what was not given', () => {
    const input = paymentInput('NOK');
    const wire = toWireCreatePayment({
      ...input,
      payment: {
        ...input.payment,
        installments: null,
        items: [{ description: 'x', grossTotalPriceMinor: null, quantity: 1 }],
      },
    });
    expect(wire.payment.installments).toBeNull();
    expect(wire.payment.items).toEqual([{ description: 'x', grossTotalPrice: null, quantity: 1 }]);
    expect('paymentRef' in wire.payment).toBe(false);
  });

  it('names the offending field, never its value', () => {
    const input = paymentInput('NOK');
    const bad = {
      ...input,
      payment: { ...input.payment, items: [{ description: 'x', vatAmountMinor: 0.5 }] },
    };
    expect(() => toWireCreatePayment(bad)).toThrow('payment.items[0].vatAmount');
    expect(() =>
      toWireCreatePayment({ ...input, payment: { ...input.payment, currency: 'XXX' } }),
    ).toThrow(/payment.currency is not a known ISO 4217 currency/);
  });
});

describe('installments', () => {
  it('create and update bodies are in major units and schema-valid', () => {
    const create = toWireCreateInstallment(
      {
        date: '2027-02-01',
        grossAmountMinor: 10_050,
        items: [{ description: 'a', vatAmountMinor: 2010 }],
      },
      'NOK',
    );
    expect(create).toEqual({
      date: '2027-02-01',
      grossAmount: 100.5,
      items: [{ description: 'a', vatAmount: 20.1 }],
    });
    const update = toWireUpdateInstallment({ grossAmountMinor: 1 }, 'KWD');
    expect(update).toEqual({ grossAmount: 0.001 });
    expect(updateInstallmentSchema.safeParse(update).success).toBe(true);
    expect(updateInstallmentSchema.safeParse(toWireUpdateInstallment({}, 'NOK')).success).toBe(
      false,
    );
  });

  it('records map to minor units with the known currency and keep unknown fields in raw', () => {
    const wire = record({ grossAmount: 1249.5, extra: 'kept' });
    const installment = fromWireInstallment(wire, 'NOK');
    expect(installment).toMatchObject({
      id: 'a'.repeat(24),
      grossAmountMinor: 124_950,
      currency: 'NOK',
      status: 'CREATED',
      type: 'initial',
      numTried: 0,
      successfullyChargedAt: null,
    });
    expect(installment.raw).toMatchObject({ extra: 'kept' });
  });
});

describe('responses', () => {
  it('create-payment response: link, installments in the request currency, null installments', () => {
    const created = fromWireCreatePayment(
      {
        id: 'b'.repeat(24),
        _links: { longGui: 'https://pay.example/p/b', gui: '/p/b' },
        installments: [record({ grossAmount: 1500 })],
      },
      'JPY',
    );
    expect(created.paymentLink).toBe('https://pay.example/p/b');
    expect(created.installments?.[0]?.grossAmountMinor).toBe(1500);
    expect(fromWireCreatePayment({ id: 'c', installments: null }, 'NOK').installments).toBeNull();
    expect(fromWireCreatePayment({ id: 'c' }, 'NOK').paymentLink).toBeUndefined();
  });

  const status = paymentStatusResponseSchema.parse({
    totalAmount: 1562.5,
    installments: [record({ grossAmount: 781.25 })],
    paymentId: 'd'.repeat(24),
    paymentNumber: 1000,
    paymentStatus: { paymentStatus: 'DRAFT' },
    merchantId: 'org-1',
    createdAt: '2026-11-21T10:00:00Z',
    dueDate: '2026-12-01',
    files: [],
    currency: 'NOK',
    somethingNew: { x: 1 },
  });

  it('payment status: amounts in minor units, raw status kept, unknown fields in raw', () => {
    const mapped = fromWirePaymentStatus(status, undefined);
    expect(mapped).toMatchObject({
      paymentId: 'd'.repeat(24),
      status: 'DRAFT',
      currency: 'NOK',
      totalAmountMinor: 156_250,
      paymentNumber: 1000,
      dueDate: '2026-12-01',
    });
    expect(mapped.installments[0]?.grossAmountMinor).toBe(78_125);
    expect(mapped.raw).toMatchObject({ somethingNew: { x: 1 } });
  });

  it('an answer of unshown shape: decimal text amounts, digit text counts, epoch times', () => {
    const cancelled = cancelPaymentResponseSchema.parse({
      ...status,
      totalAmount: '1562.50',
      paymentNumber: '1000',
      dueDate: Date.parse('2026-12-01T00:00:00Z'),
      installments: [
        {
          ...record(),
          grossAmount: '781.25',
          numTried: '1',
          successfullyChargedAt: 1_796_126_400,
          lastFailedAt: undefined,
        },
      ],
    });
    const mapped = fromWirePaymentStatus(cancelled, 'NOK');
    expect(mapped).toMatchObject({ totalAmountMinor: 156_250, paymentNumber: 1000 });
    expect(mapped.dueDate).toBe('2026-12-01');
    expect(mapped.installments[0]).toMatchObject({
      grossAmountMinor: 78_125,
      numTried: 1,
      successfullyChargedAt: '2026-12-01T12:00:00.000Z',
      lastFailedAt: null,
    });
    // The spec shows the status answer: its amount stays a JSON number.
    expect(
      paymentStatusResponseSchema.safeParse({ ...status, totalAmount: '1562.50' }).success,
    ).toBe(false);
    // Decimal text is converted exactly, and more decimals than the currency has are refused.
    expect(fromWireAmount('0.10', 'NOK', 'x')).toBe(10);
    expect(() => fromWireAmount('0.105', 'NOK', 'x')).toThrow(MappingError);
  });

  it('upload answer: what it leaves out comes from the upload', () => {
    const sent = {
      paymentId: 'd'.repeat(24),
      fileName: 'a.pdf',
      contentType: 'application/pdf',
      contentBase64: 'JVBERi0=',
    };
    const sparse = fromWireDocument(documentSchema.parse({ id: 17, extra: true }), sent, 5);
    expect(sparse).toMatchObject({
      id: '17',
      paymentId: sent.paymentId,
      fileName: 'a.pdf',
      contentType: 'application/pdf',
      size: 5,
      uploadedAt: null,
    });
    expect(sparse.raw).toMatchObject({ extra: true });
    const full = fromWireDocument(
      documentSchema.parse({ id: 'x', size: '9', uploadedAt: 1_796_126_400_000, fileName: 'b' }),
      sent,
      5,
    );
    expect(full).toMatchObject({ size: 9, fileName: 'b', uploadedAt: '2026-12-01T12:00:00.000Z' });
  });

  it('payment status: the caller currency is a fallback and must agree', () => {
    const { currency: _omit, ...withoutCurrency } = status;
    expect(fromWirePaymentStatus(withoutCurrency, 'NOK').totalAmountMinor).toBe(156_250);
    expect(() => fromWirePaymentStatus(withoutCurrency, undefined)).toThrow(/no currency/);
    expect(() => fromWirePaymentStatus(status, 'SEK')).toThrow(/not the expected SEK/);
  });

  it('refund: request with crossPayment, response in minor units with nullable remaining', () => {
    const body = toWireRefund({
      paymentId: 'e'.repeat(24),
      currency: 'NOK',
      totalGrossAmountMinor: 12_500,
      totalNetAmountMinor: 10_000,
      invoiceLines: [
        {
          description: 'Refund',
          grossUnitPriceMinor: 12_500,
          netUnitPriceMinor: 10_000,
          quantity: 1,
          vatAmountMinor: 2_500,
          taxRate: 25,
        },
      ],
    });
    expect(body).toMatchObject({ crossPayment: 'e'.repeat(24), totalGrossAmount: 125 });
    expect(body.invoiceLines?.[0]).toEqual({
      description: 'Refund',
      grossUnitPrice: 125,
      netUnitPrice: 100,
      quantity: 1,
      vatAmount: 25,
      taxRate: 25,
    });
    expect(refundSchema.safeParse(body).success).toBe(true);
    const bare = toWireRefund({
      paymentId: 'x',
      currency: 'NOK',
      totalGrossAmountMinor: 1,
      totalNetAmountMinor: 1,
    });
    expect(bare.invoiceLines).toEqual([]);

    const result = fromWireRefund(
      refundResponseSchema.parse({
        refundType: 'partial',
        originalAmount: 1562.5,
        originalCurrency: 'NOK',
        grossRefundedAmount: 125,
        netRefundedAmount: 100,
        remainingAmount: null,
        refundId: 'r1',
      }),
    );
    expect(result).toMatchObject({
      refundId: 'r1',
      currency: 'NOK',
      debtorAccountNumber: '',
      originalAmountMinor: 156_250,
      grossRefundedAmountMinor: 12_500,
      netRefundedAmountMinor: 10_000,
      remainingAmountMinor: null,
    });
  });
});
