/**
 * Conformance, HTTP level: which media types each endpoint takes (415 otherwise), which
 * methods a known path allows (405 with Allow otherwise) and the RFC 6750 challenges.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { fetchToken, startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import { call, control, createPayment, paymentBody, type ErrorBody } from './helpers.js';

describe('sandbox requests', () => {
  let sandbox: SandboxHandle;
  let token: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());
  beforeEach(async () => {
    await control(sandbox, 'POST', '/reset');
    token = await fetchToken(sandbox);
  });

  describe('media types', () => {
    const form = (values: Record<string, string>) => new URLSearchParams(values).toString();

    it('answers 415 unsupported_media_type to a form or text body on a JSON endpoint', async () => {
      const payment = await createPayment(sandbox, token);
      const cases: [string, string, string, string][] = [
        [
          'POST',
          `${sandbox.url}/api/payments`,
          'application/x-www-form-urlencoded',
          form({ customer: 'x' }),
        ],
        [
          'POST',
          `${sandbox.url}/api/refund`,
          'text/plain',
          JSON.stringify({ crossPayment: payment.id }),
        ],
        [
          'POST',
          `${sandbox.partnerUrl}/payment-methods/resend`,
          'application/x-www-form-urlencoded',
          form({ paymentId: payment.id, paymentMethodId: '000000000000000000000000' }),
        ],
        [
          'POST',
          `${sandbox.partnerUrl}/payments/${payment.id}/manual-paid`,
          'text/plain',
          'paid in cash',
        ],
        [
          'POST',
          `${sandbox.url}/sandbox/payments/${payment.id}/simulate`,
          'application/x-www-form-urlencoded',
          form({ action: 'paid' }),
        ],
      ];
      for (const [method, url, contentType, body] of cases) {
        const answer = await call<ErrorBody>(method, url, {
          token,
          body,
          headers: { 'content-type': contentType },
        });
        expect({ url, status: answer.status, code: answer.body.code }).toEqual({
          url,
          status: 415,
          code: 'unsupported_media_type',
        });
      }
      // nothing happened to the payment
      const status = await call<{ paymentStatus: { paymentStatus: string } }>(
        'GET',
        `${sandbox.url}/api/payments/${payment.id}/paymentStatus`,
        { token },
      );
      expect(status.body.paymentStatus.paymentStatus).not.toBe('PAID');
      expect(status.body.paymentStatus.paymentStatus).not.toBe('SUCCESS');
    });

    it('still takes JSON with a charset, and the form body of the token endpoint', async () => {
      const answer = await call('POST', `${sandbox.url}/api/payments`, {
        token,
        body: paymentBody(),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(answer.status).toBe(200);
      expect(await fetchToken(sandbox)).toEqual(expect.any(String));
    });
  });
});
