/** The payment's own references (CONTRACT §10, issue 29): from the ERP event to Payflow's body. */
import { describe, expect, it } from '@jest/globals';
import {
  anEvent,
  paymentRequestedData,
  type PaymentRequestedInput,
} from '../../../test/support/builders.js';
import { toWireCreatePayment } from '../../payflow/wire/payflow.mapping.js';
import { mapPaymentRequested } from './payment-requested.mapping.js';

const map = (overrides: Partial<PaymentRequestedInput> = {}, orderId = 'SO-1') =>
  mapPaymentRequested(
    anEvent('order.payment_requested', paymentRequestedData(overrides), { orderId }),
  );

describe('mapPaymentRequested: paymentRef and externalRef', () => {
  it("passes the ERP's paymentRef and externalRef to Payflow, internalRef staying the order id", () => {
    const mapped = map({ paymentRef: '  PAY-2026-0042 ', externalRef: 'DMS/77-1' }, 'SO-42');
    expect(mapped.input.payment).toMatchObject({
      paymentRef: 'PAY-2026-0042',
      externalRef: 'DMS/77-1',
      internalRef: 'SO-42',
    });
    expect(mapped).toMatchObject({ paymentRef: 'PAY-2026-0042', externalRef: 'DMS/77-1' });
    // On the wire under the spec's names.
    const wire = toWireCreatePayment({ ...mapped.input, callback: {} });
    expect(wire.payment).toMatchObject({
      paymentRef: 'PAY-2026-0042',
      externalRef: 'DMS/77-1',
      internalRef: 'SO-42',
    });
  });

  it('sends no paymentRef or externalRef when the order has none (absent or null)', () => {
    for (const overrides of [{}, { paymentRef: null, externalRef: null }]) {
      const mapped = map(overrides, 'SO-7');
      expect(mapped.input.payment).not.toHaveProperty('paymentRef');
      expect(mapped.input.payment).not.toHaveProperty('externalRef');
      expect(mapped.input.payment.internalRef).toBe('SO-7');
      expect(mapped).toMatchObject({ paymentRef: null, externalRef: null });
      const wire = toWireCreatePayment({ ...mapped.input, callback: {} });
      expect('paymentRef' in wire.payment).toBe(false);
      expect('externalRef' in wire.payment).toBe(false);
    }
  });
});
