import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { currencyExponent, formatMinorUnits, minorUnitsToJsonNumber } from '../../money/money.js';
import { MappingFailedError } from '../../errors/dead-letter.errors.js';
import type { PaymentItemInput } from '../../payflow/payflow.types.js';
import {
  aLine,
  anEvent,
  paymentRequestedData,
  type LineInput,
  type PaymentRequestedInput,
} from '../../../test/support/builders.js';
import { mapPaymentRequested } from './payment-requested.mapping.js';

const map = (overrides: Partial<PaymentRequestedInput> = {}, orderId = 'SO-1') =>
  mapPaymentRequested(
    anEvent('order.payment_requested', paymentRequestedData(overrides), { orderId }),
  );

function mappingError(run: () => unknown): MappingFailedError {
  try {
    run();
  } catch (error) {
    if (error instanceof MappingFailedError) return error;
    throw error;
  }
  throw new Error('expected a MappingFailedError');
}

describe('mapPaymentRequested', () => {
  it('maps the order to the create-payment body', () => {
    const mapped = map(
      {
        lines: [
          aLine({ description: 'Service', quantity: 2, unitPriceNet: '500.00', taxRate: 25 }),
          aLine({
            description: 'Delivery',
            quantity: 1,
            unitPriceNet: '99.50',
            taxRate: 25,
            discountRate: 10,
            lineType: 'shipping',
          }),
        ],
        dueDate: '2026-12-01',
        paymentMethodId: '000000000000000000000001',
        profileId: 'profile-1',
        paymentDepartment: 'sales',
        invoiceNumber: 'INV-9',
        customerReference: 'REF-1',
        invoiceComments: 'Thanks',
        sendPaymentLink: true,
        sendPaymentReminder: false,
        redirect: {
          successUrl: 'https://shop.example/ok',
          cancelUrl: 'https://shop.example/cancel',
          cancelButtonText: 'Back',
        },
        sharebox: { plateNumber: 'EV12345' },
      },
      'SO-42',
    );
    // 1000.00 + 89.55 net; 1250.00 + 111.94 (111.9375) gross.
    expect(mapped).toMatchObject({
      currency: 'NOK',
      totalNetMinor: 108955,
      totalGrossMinor: 136194,
      vatMinor: 27239,
      installments: null,
      paymentMethodId: '000000000000000000000001',
    });
    const { input } = mapped;
    expect(input.customer).toEqual(paymentRequestedData().customer);
    expect(input.order).toEqual({
      orderNumber: 'ON-10042',
      objects: [
        {
          type: 'newCar',
          numberPlate: 'EV12345',
          brand: 'Volvo',
          model: 'EX30',
          year: '2026',
          vinNumber: 'YV1ABCDEF12345678',
        },
        { type: 'tradeInCAR', numberPlate: 'AB12345', brand: 'Saab', model: '9-3', year: '2009' },
      ],
    });
    expect(input.payment).toEqual({
      currency: 'NOK',
      totalGrossAmountMinor: 136194,
      totalNetAmountMinor: 108955,
      items: [
        {
          description: 'Service',
          quantity: 2,
          taxRate: 25,
          discountRate: 0,
          lineType: 'regular',
          netUnitPriceMinor: 50000,
          grossUnitPriceMinor: 62500,
          netTotalPriceMinor: 100000,
          grossTotalPriceMinor: 125000,
          vatAmountMinor: 25000,
        },
        {
          description: 'Delivery',
          quantity: 1,
          taxRate: 25,
          discountRate: 10,
          lineType: 'shipping',
          netUnitPriceMinor: 9950,
          grossUnitPriceMinor: 12438,
          netTotalPriceMinor: 8955,
          grossTotalPriceMinor: 11194,
          vatAmountMinor: 2239,
        },
      ],
      dueDate: '2026-12-01',
      invoiceNumber: 'INV-9',
      customerReference: 'REF-1',
      invoiceComments: 'Thanks',
      profileId: 'profile-1',
      paymentDepartment: 'sales',
      internalRef: 'SO-42',
    });
    expect(input.communication).toEqual({ send_payment_link: true, send_payment_reminder: false });
    expect(input.behaviour).toEqual({
      redirectSuccessUrl: 'https://shop.example/ok',
      redirectCancelUrl: 'https://shop.example/cancel',
      cancelButtonText: 'Back',
    });
    expect(input.serviceAdvisorEmail).toBe('advisor@dealer.example');
    expect(input.paymentMethodId).toBe('000000000000000000000001');
    expect(input.supportFunctions).toEqual([
      { sharebox: { useSharebox: true, plateNumber: 'EV12345' } },
    ]);
    expect(input).not.toHaveProperty('callback');
  });

  it('maps vehicle roles and leaves out what the order does not have', () => {
    const { input } = map({
      vehicles: [{ role: 'other', brand: 'Trailer' }],
      serviceAdvisorEmail: null,
      redirect: { successUrl: 'https://shop.example/ok', cancelButtonText: 'Back' },
    });
    expect(input.order.objects).toEqual([{ type: '', brand: 'Trailer' }]);
    expect(input.serviceAdvisorEmail).toBeNull();
    // No cancel URL: the cancel button's text is not sent.
    expect(input.behaviour).toEqual({ redirectSuccessUrl: 'https://shop.example/ok' });
    for (const key of ['communication', 'supportFunctions', 'paymentMethodId']) {
      expect(input).not.toHaveProperty(key);
    }
    expect(input.payment).not.toHaveProperty('installments');
  });

  it('keeps an installment list that sums to the gross total, with its refs', () => {
    const mapped = map({
      installments: [
        { installmentRef: 'down', date: '2026-12-01', amount: '250.00' },
        {
          date: '2027-01-01',
          amount: 1000,
          lines: [{ description: 'part', quantity: 1, unitPriceNet: '800.00', taxRate: 25 }],
        },
      ],
    });
    expect(mapped.installments).toEqual([
      { ref: 'down', position: 1, date: '2026-12-01', grossMinor: 25000 },
      {
        ref: '2',
        position: 2,
        date: '2027-01-01',
        grossMinor: 100000,
        items: [expect.objectContaining({ grossTotalPriceMinor: 100000, vatAmountMinor: 20000 })],
      },
    ]);
    expect(mapped.input.payment.installments).toEqual([
      { date: '2026-12-01', grossAmountMinor: 25000 },
      { date: '2027-01-01', grossAmountMinor: 100000, items: [expect.any(Object)] },
    ]);
  });

  it('refuses an installment list that does not sum to the gross total', () => {
    const error = mappingError(() =>
      map({
        installments: [
          { date: '2026-12-01', amount: '250.00' },
          { date: '2027-01-01', amount: '999.99' },
        ],
      }),
    );
    expect(error.code).toBe('ORDER.INSTALLMENTS_MISMATCH');
    expect(error.deadLetterReason).toBe('mapping_failed');
    expect(error.message).toBe(
      'the installments sum to 1249.99 NOK, not the gross total 1250.00 NOK',
    );
  });

  it('refuses duplicate installment refs and amounts with too many decimals', () => {
    expect(
      mappingError(() =>
        map({
          installments: [
            { installmentRef: '2', date: '2026-12-01', amount: '625.00' },
            { date: '2027-01-01', amount: '625.00' },
          ],
        }),
      ).code,
    ).toBe('ORDER.DUPLICATE_INSTALLMENT_REF');
    const decimals = mappingError(() =>
      map({ installments: [{ date: '2026-12-01', amount: '1250.001' }] }),
    );
    expect(decimals.code).toBe('ORDER.TOO_MANY_DECIMALS');
    expect(decimals.message).toBe('installments[0].amount has more decimals than NOK allows (2)');
    expect(
      mappingError(() => map({ lines: [aLine({ unitPriceNet: '9.999' })] })).message,
    ).toContain('lines[0].unitPriceNet');
  });

  it('splits a count plan evenly, the remainder first, on clamped monthly dates', () => {
    // 1000.01 gross → 3 × 333.33 + 0.02 to the first.
    const mapped = map({
      lines: [aLine({ unitPriceNet: '1000.01', taxRate: 0 })],
      installments: { count: 3, firstDate: '2027-01-31', intervalMonths: 1 },
    });
    expect(mapped.installments).toEqual([
      { ref: '1', position: 1, date: '2027-01-31', grossMinor: 33335 },
      { ref: '2', position: 2, date: '2027-02-28', grossMinor: 33333 },
      { ref: '3', position: 3, date: '2027-03-31', grossMinor: 33333 },
    ]);
  });

  it('refuses a plan or lines that cannot be a payment', () => {
    expect(
      mappingError(() =>
        map({
          lines: [aLine({ unitPriceNet: '0.02', taxRate: 0 })],
          installments: { count: 3, firstDate: '2027-01-31', intervalMonths: 1 },
        }),
      ).code,
    ).toBe('ORDER.INSTALLMENT_NOT_POSITIVE');
    expect(mappingError(() => map({ lines: [aLine({ unitPriceNet: '-5.00' })] })).code).toBe(
      'ORDER.NON_POSITIVE_TOTAL',
    );
  });

  // ------------------------------------------------------------------ property

  /** Exact reference: p × q × (100 − d) × (100 + t) / 10^4 as a fraction, rounded once. */
  function reference(line: GeneratedLine, exponent: number): { net: bigint; gross: bigint } {
    const fraction = (text: string): [bigint, bigint] => {
      const [whole, decimals = ''] = text.replace('-', '').split('.');
      const sign = text.startsWith('-') ? -1n : 1n;
      return [sign * BigInt(`${whole}${decimals}`), 10n ** BigInt(decimals.length)];
    };
    const round = (numerator: bigint, denominator: bigint): bigint => {
      const scaled = numerator * 10n ** BigInt(exponent);
      const negative = scaled < 0n;
      const magnitude = negative ? -scaled : scaled;
      const quotient = magnitude / denominator;
      const rounded = (magnitude % denominator) * 2n >= denominator ? quotient + 1n : quotient;
      return negative ? -rounded : rounded;
    };
    const [pn, pd] = fraction(line.price);
    const [qn, qd] = fraction(line.quantity);
    const [dn, dd] = fraction(line.discount);
    const [tn, td] = fraction(line.tax);
    const netN = pn * qn * (100n * dd - dn);
    const netD = pd * qd * dd * 100n;
    return {
      net: round(netN, netD),
      gross: round(netN * (100n * td + tn), netD * td * 100n),
    };
  }

  interface GeneratedLine {
    readonly price: string;
    readonly quantity: string;
    readonly tax: string;
    readonly discount: string;
    readonly asNumbers: boolean;
  }

  const currencies = ['NOK', 'EUR', 'JPY', 'KWD', 'SEK'] as const;

  const lineArbitrary = (currency: string): fc.Arbitrary<GeneratedLine> =>
    fc.record({
      price: fc
        .integer({ min: 1, max: 50_000_000 })
        .map((minor) => formatMinorUnits(minor, currency)),
      quantity: fc.oneof(
        fc.integer({ min: 1, max: 50 }).map(String),
        fc.integer({ min: 1, max: 99_999 }).map((milli) => (milli / 1000).toFixed(3)),
      ),
      tax: fc.constantFrom('0', '6', '12', '15', '20.9', '25', '33.333'),
      discount: fc.integer({ min: 0, max: 9_999 }).map((basis) => (basis / 100).toFixed(2)),
      asNumbers: fc.boolean(),
    });

  const orderArbitrary = fc.constantFrom(...currencies).chain((currency) =>
    fc.record({
      currency: fc.constant(currency),
      lines: fc.array(lineArbitrary(currency), { minLength: 1, maxLength: 8 }),
      plan: fc.oneof(
        fc.constant({ kind: 'none' as const }),
        fc.record({
          kind: fc.constant('count' as const),
          count: fc.integer({ min: 1, max: 24 }),
          intervalMonths: fc.integer({ min: 1, max: 6 }),
        }),
        fc.record({
          kind: fc.constant('array' as const),
          cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
        }),
      ),
    }),
  );

  const toLineInput = (line: GeneratedLine, currency: string): LineInput => ({
    description: 'generated',
    quantity: line.asNumbers ? Number(line.quantity) : line.quantity,
    unitPriceNet: line.asNumbers
      ? minorUnitsToJsonNumber(
          Math.round(Number(line.price) * 10 ** currencyExponent(currency)),
          currency,
        )
      : line.price,
    taxRate: line.asNumbers ? Number(line.tax) : line.tax,
    discountRate: line.discount,
  });

  const sum = (values: readonly number[]): number =>
    values.reduce((total, value) => total + value, 0);

  it('keeps totals, VAT and installments consistent to the minor unit for any order', () => {
    fc.assert(
      fc.property(orderArbitrary, ({ currency, lines, plan }) => {
        const exponent = currencyExponent(currency);
        const lineInputs = lines.map((line) => toLineInput(line, currency));
        let base;
        try {
          base = map({ currency, lines: lineInputs });
        } catch (error) {
          // Tiny prices × tiny quantities may round to nothing: no payment can be made.
          expect((error as MappingFailedError).code).toBe('ORDER.NON_POSITIVE_TOTAL');
          const total = lines.reduce((acc, line) => acc + reference(line, exponent).gross, 0n);
          expect(total <= 0n).toBe(true);
          return;
        }
        const gross = base.totalGrossMinor;

        let installments: PaymentRequestedInput['installments'];
        if (plan.kind === 'count') {
          installments = {
            count: plan.count,
            firstDate: '2027-01-31',
            intervalMonths: plan.intervalMonths,
          };
        } else if (plan.kind === 'array') {
          // Split the gross total at the generated cut points into positive parts.
          const points = [...new Set(plan.cuts.map((cut) => Math.floor(cut * gross)))]
            .filter((point) => point > 0 && point < gross)
            .sort((a, b) => a - b);
          const bounds = [0, ...points, gross];
          installments = bounds.slice(1).map((end, index) => ({
            date: `2027-0${(index % 9) + 1}-15`,
            amount: formatMinorUnits(end - (bounds[index] ?? 0), currency),
          }));
        }

        let mapped;
        try {
          mapped = map({ currency, lines: lineInputs, installments });
        } catch (error) {
          // Only a count plan with more installments than minor units may fail.
          expect(error).toBeInstanceOf(MappingFailedError);
          expect((error as MappingFailedError).code).toBe('ORDER.INSTALLMENT_NOT_POSITIVE');
          expect(plan.kind === 'count' && plan.count > gross).toBe(true);
          return;
        }

        const items = mapped.input.payment.items as readonly PaymentItemInput[];
        expect(items).toHaveLength(lines.length);
        items.forEach((item, index) => {
          const expected = reference(lines[index]!, exponent);
          expect(BigInt(item.netTotalPriceMinor ?? NaN)).toBe(expected.net);
          expect(BigInt(item.grossTotalPriceMinor ?? NaN)).toBe(expected.gross);
          expect(item.vatAmountMinor).toBe(
            (item.grossTotalPriceMinor ?? 0) - (item.netTotalPriceMinor ?? 0),
          );
          for (const value of [
            item.netTotalPriceMinor,
            item.grossTotalPriceMinor,
            item.vatAmountMinor,
            item.netUnitPriceMinor,
            item.grossUnitPriceMinor,
          ]) {
            expect(Number.isSafeInteger(value)).toBe(true);
          }
        });
        expect(sum(items.map((item) => item.grossTotalPriceMinor ?? 0))).toBe(
          mapped.totalGrossMinor,
        );
        expect(sum(items.map((item) => item.netTotalPriceMinor ?? 0))).toBe(mapped.totalNetMinor);
        expect(sum(items.map((item) => item.vatAmountMinor ?? 0))).toBe(mapped.vatMinor);
        expect(mapped.totalGrossMinor - mapped.totalNetMinor).toBe(mapped.vatMinor);
        expect(mapped.input.payment.totalGrossAmountMinor).toBe(mapped.totalGrossMinor);
        expect(mapped.input.payment.totalNetAmountMinor).toBe(mapped.totalNetMinor);

        if (plan.kind === 'none') {
          expect(mapped.installments).toBeNull();
          return;
        }
        const planned = mapped.installments ?? [];
        expect(sum(planned.map((entry) => entry.grossMinor))).toBe(mapped.totalGrossMinor);
        expect(
          planned.every((entry) => Number.isSafeInteger(entry.grossMinor) && entry.grossMinor > 0),
        ).toBe(true);
        expect(planned.map((entry) => entry.ref)).toEqual(
          planned.map((_, index) => String(index + 1)),
        );
        if (plan.kind === 'count') {
          expect(planned).toHaveLength(plan.count);
          const [first, ...rest] = planned;
          const share = Math.floor(gross / plan.count);
          expect(rest.every((entry) => entry.grossMinor === share)).toBe(true);
          expect(first?.grossMinor).toBe(share + (gross - share * plan.count));
        }
      }),
      { numRuns: 500 },
    );
  });
});
