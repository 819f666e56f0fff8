import { describe, expect, it } from '@jest/globals';
import {
  describeKinds,
  maskFreeText,
  maskPersonalData,
  maskPersonalText,
  maskPlate,
  maskVin,
} from './personal-data-mask.js';

/** An order.payment_requested as the ERP sends it, with every kind of personal data. */
const event = {
  eventId: '5b0f7c1e-1f7d-4d7e-9b5a-2a4b7e0c9d11',
  eventType: 'order.payment_requested',
  orderId: 'SO-2024-000123',
  data: {
    orderNumber: 'SO-2024-000123',
    customer: {
      type: 'person',
      firstName: 'Kari',
      lastName: 'Nordmann',
      companyName: 'Nordmann Bil AS',
      email: 'kari.nordmann@example.com',
      phone: { countryCode: '+47', number: '91234567' },
      customerNumber: 'C-1001',
      billingAddress: {
        careOf: 'Ola Nordmann',
        street: 'Storgata 1',
        secondary: 'H0101',
        postalCode: '0155',
        city: 'Oslo',
        country: 'Norway',
        countryCode: 'NO',
      },
    },
    serviceAdvisorEmail: 'advisor@dealer.example',
    vehicles: [
      {
        role: 'new',
        numberPlate: 'EL 12345',
        brand: 'Volkswagen',
        model: 'ID.4',
        year: 2024,
        vin: 'WVWZZZE2ZPE012345',
      },
    ],
    currency: 'NOK',
    lines: [{ description: 'Service', quantity: '1', unitPriceNet: '1000.00', taxRate: '25' }],
    dueDate: '2024-06-30',
    invoiceComments:
      'Call Kari on +47 912 34 567 or tlf: 22 33 44 55, mail kari@example.no; car WVWZZZE2ZPE012345',
    sharebox: { plateNumber: 'AB 98765' },
  },
};

describe('maskPersonalData', () => {
  const { masked, found } = maskPersonalData(event);
  const text = JSON.stringify(masked);

  it('masks names, addresses, e-mails, phones, VINs and plates by key, at any depth', () => {
    const data = (masked as typeof event).data;
    expect(data.customer.firstName).toBe('K•••');
    expect(data.customer.lastName).toBe('N•••');
    expect(data.customer.companyName).toBe('N•••');
    expect(data.customer.email).toBe('k•••@example.com');
    expect(data.customer.phone).toEqual({ countryCode: '+47', number: '••••••67' });
    expect(data.customer.billingAddress).toEqual({
      careOf: '•••',
      street: '•••',
      secondary: '•••',
      postalCode: '•••',
      city: '•••',
      country: 'Norway',
      countryCode: 'NO',
    });
    expect(data.serviceAdvisorEmail).toBe('a•••@dealer.example');
    expect(data.vehicles[0]!.vin).toBe('WVW••••••••••••••');
    expect(data.vehicles[0]!.numberPlate).toBe('••••45');
    expect(data.sharebox.plateNumber).toBe('••••65');
  });

  it('masks e-mails, phones and VINs inside free text by pattern', () => {
    const comments = (masked as typeof event).data.invoiceComments;
    expect(comments).toBe(
      'Call Kari on +47 ••••••67 or tlf: ••••••55, mail k•••@example.no; car WVW••••••••••••••',
    );
  });

  it('leaves no personal value anywhere in the payload', () => {
    for (const value of [
      'Nordmann',
      'kari.nordmann@example.com',
      '91234567',
      'Storgata',
      '0155',
      'Oslo',
      'EL 12345',
      'WVWZZZE2ZPE012345',
      'advisor@dealer.example',
      'AB 98765',
      '22 33 44 55',
      'Ola',
    ]) {
      expect(text).not.toContain(value);
    }
  });

  it('keeps ids, numbers, amounts, dates, types and the vehicle’s make readable', () => {
    const data = (masked as typeof event).data;
    expect((masked as typeof event).eventId).toBe(event.eventId);
    expect(data.orderNumber).toBe('SO-2024-000123');
    expect(data.customer.customerNumber).toBe('C-1001');
    expect(data.customer.type).toBe('person');
    expect(data.lines).toEqual(event.data.lines);
    expect(data.dueDate).toBe('2024-06-30');
    expect(data.vehicles[0]).toMatchObject({ brand: 'Volkswagen', model: 'ID.4', year: 2024 });
  });

  it('says which kinds it found, in a fixed order', () => {
    expect(found).toEqual(['name', 'address', 'email', 'phone', 'vin', 'number_plate']);
    expect(describeKinds(found)).toBe(
      'names, addresses, e-mail addresses, phone numbers, VINs and number plates',
    );
    expect(maskPersonalData({ orderId: 'SO-1', amount: 10 }).found).toEqual([]);
  });

  it('masks a document’s content and keys spelled in other cases', () => {
    const { masked: doc, found: kinds } = maskPersonalData({
      documentRef: 'D-1',
      fileName: 'invoice.pdf',
      content_base64: 'JVBERi0xLjQK',
      customer: { FIRST_NAME: 'Kari', 'e-mail': 'k@example.com', mobile: 4791234567 },
    });
    expect(doc).toEqual({
      documentRef: 'D-1',
      fileName: 'invoice.pdf',
      content_base64: '[document: 12 characters]',
      customer: { FIRST_NAME: 'K•••', 'e-mail': 'k•••@example.com', mobile: '•••' },
    });
    expect(kinds).toEqual(['name', 'email', 'phone', 'document']);
  });

  it('does not take a template or a file name for a plate or a name', () => {
    expect(maskPersonalData({ template: 'standard', fileName: 'x.pdf' }).masked).toEqual({
      template: 'standard',
      fileName: 'x.pdf',
    });
  });
});

describe('free text', () => {
  it('masks what it recognizes and reports it', () => {
    expect(maskPersonalText('mail me at ola@example.com')).toEqual({
      masked: 'mail me at o•••@example.com',
      found: ['email'],
    });
    expect(maskFreeText('mobile 912 34 567')).toBe('mobile ••••••67');
    expect(maskFreeText('order SO-2024-000123 of 1234.50 NOK')).toBe(
      'order SO-2024-000123 of 1234.50 NOK',
    );
  });

  it('masks VINs and plates leaving a hint', () => {
    expect(maskVin('WVWZZZE2ZPE012345')).toBe('WVW••••••••••••••');
    expect(maskPlate('EL 12345')).toBe('••••45');
    expect(maskPlate('A1')).toBe('•••');
  });
});
