/**
 * Conformance, HTTP level: which media types each endpoint takes (415 otherwise), which
 * methods a known path allows (405 with Allow otherwise) and the RFC 6750 challenges.
 */
import { describe, expect, it } from '@jest/globals';
import { fetchToken, type SandboxHandle } from '../support/sandbox.js';
import { call, createPayment, paymentBody, type ErrorBody } from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';

describe('sandbox requests', () => {
  let sandbox: SandboxHandle;
  let token: string;

  useTestSandbox({
    started: (started) => {
      sandbox = started;
    },
    token: (fresh) => {
      token = fresh;
    },
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

  describe('methods', () => {
    it('answers 405 with Allow to a wrong method on a known path', async () => {
      const payment = await createPayment(sandbox, token);
      const cases: [string, string, string[]][] = [
        ['PUT', `${sandbox.url}/api/payments`, ['POST']],
        ['GET', `${sandbox.url}/api/refund`, ['POST']],
        ['DELETE', `${sandbox.url}/api/payments/${payment.id}/paymentStatus`, ['GET', 'HEAD']],
        [
          'POST',
          `${sandbox.url}/api/payments/${payment.id}/installments/x`,
          ['DELETE', 'GET', 'HEAD', 'PUT'],
        ],
        ['GET', `${sandbox.partnerUrl}/auth/token`, ['POST']],
        ['POST', `${sandbox.partnerUrl}/payment-methods`, ['GET', 'HEAD']],
        ['GET', `${sandbox.url}/sandbox/reset`, ['POST']],
      ];
      for (const [method, url, allowed] of cases) {
        const answer = await call<ErrorBody>(method, url, { token });
        const allow = (answer.headers.get('allow') ?? '').split(/,\s*/).sort();
        expect({ method, url, status: answer.status, code: answer.body.code, allow }).toEqual({
          method,
          url,
          status: 405,
          code: 'method_not_allowed',
          allow: allowed,
        });
      }
    });

    it('still answers 404 to a path no method serves', async () => {
      const answer = await call<ErrorBody>('GET', `${sandbox.url}/api/payments/a/b/c/d`, { token });
      expect(answer.status).toBe(404);
      expect(answer.headers.get('allow')).toBeNull();
    });
  });

  describe('RFC 6750 challenges', () => {
    const status = (paymentId: string) => `${sandbox.url}/api/payments/${paymentId}/paymentStatus`;

    it('a request without a token gets a Bearer challenge without an error code', async () => {
      const answer = await call<ErrorBody>('GET', status('ffffffffffffffffffffffff'));
      expect(answer.status).toBe(401);
      const challenge = answer.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer\b/);
      expect(challenge).not.toMatch(/error=/);
    });

    it('an invalid or expired token gets error="invalid_token"', async () => {
      const answer = await call('GET', status('ffffffffffffffffffffffff'), { token: 'sbx_nope' });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    });

    it('a missing scope is 403 with error="insufficient_scope" and the scope needed', async () => {
      const readOnly = await fetchToken(
        sandbox,
        'sandbox-client',
        'sandbox-secret',
        'organization:payflow:read',
      );
      const answer = await call<ErrorBody>('POST', `${sandbox.url}/api/payments`, {
        token: readOnly,
        body: paymentBody(),
      });
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe('insufficient_scope');
      const challenge = answer.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).toContain('error="insufficient_scope"');
      expect(challenge).toContain('scope="organization:payflow:create"');
    });
  });
});
