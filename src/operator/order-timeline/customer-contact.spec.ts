import { describe, expect, it } from '@jest/globals';
import { contactOf, maskEmail, maskPhone, masked } from './customer-contact.query.js';
import { traceIdOf } from './order-timeline.view.js';

describe('customer contact', () => {
  it('reads the customer of an ERP event, and nothing from what is not one', () => {
    const event = {
      eventId: 'e-1',
      data: {
        customer: {
          email: 'kari@example.com',
          phone: { countryCode: '+47', number: '91234567' },
        },
      },
    };
    expect(contactOf(Buffer.from(JSON.stringify(event)))).toEqual({
      email: 'kari@example.com',
      phone: '+47 91234567',
    });
    expect(contactOf(Buffer.from('{not json'))).toBeNull();
    expect(contactOf(Buffer.from('{"data":{}}'))).toBeNull();
    expect(contactOf(null)).toBeNull();
  });

  it('masks all but the first letter and the domain, the country code and two digits', () => {
    expect(maskEmail('kari@example.com')).toBe('k•••@example.com');
    expect(maskPhone('+47 91234567')).toBe('+47 ••••••67');
    expect(masked({ email: 'kari@example.com', phone: '+47 91234567', fromEventId: 'e' })).toEqual({
      email: 'k•••@example.com',
      phone: '+47 ••••••67',
      fromEventId: 'e',
    });
  });
});

describe('traceIdOf', () => {
  it('takes the trace id of a W3C traceparent', () => {
    expect(traceIdOf('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toBe(
      '0af7651916cd43dd8448eb211c80319c',
    );
    expect(traceIdOf('garbage')).toBeNull();
    expect(traceIdOf(null)).toBeNull();
  });
});
