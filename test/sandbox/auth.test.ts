/**
 * Conformance, authentication: OAuth client credentials at /partner/auth/token, bearer
 * tokens with expiry on the virtual clock, scopes per endpoint, X-Organization-Id rules.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { fetchToken, type SandboxHandle } from '../support/sandbox.js';
import {
  basic,
  call,
  control,
  createPayment,
  paymentBody,
  tokenRequest,
  type ErrorBody,
  type ValidationBody,
} from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';

const CREATE = 'organization:payflow:create';
const UPDATE = 'organization:payflow:update';
const READ = 'organization:payflow:read';

describe('sandbox authentication', () => {
  let sandbox: SandboxHandle;

  useTestSandbox({
    options: { tokenTtlSeconds: 3600 },
    started: (started) => {
      sandbox = started;
    },
  });

  describe('POST /partner/auth/token', () => {
    it('issues a bearer token with every scope of the client (RFC 6749 §5.1)', async () => {
      const answer = await tokenRequest(sandbox, basic('sandbox-client', 'sandbox-secret'), {
        grant_type: 'client_credentials',
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.body).toEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        scope: `${CREATE} ${UPDATE} ${READ}`,
      });
    });

    it('grants fewer scopes when asked, refuses one the client lacks', async () => {
      const fewer = await tokenRequest(sandbox, basic('sandbox-client', 'sandbox-secret'), {
        grant_type: 'client_credentials',
        scope: READ,
      });
      expect(fewer.body.scope).toBe(READ);
      await control(sandbox, 'POST', '/clients', {
        clientId: 'reader',
        clientSecret: 's',
        scopes: [READ],
        organizationIds: ['org-1'],
      });
      const more = await tokenRequest(sandbox, basic('reader', 's'), {
        grant_type: 'client_credentials',
        scope: `${READ} ${CREATE}`,
      });
      expect(more.status).toBe(400);
      expect(more.body.error).toBe('invalid_scope');
    });

    it('answers 401 invalid_client to a wrong secret, an unknown client or no credentials', async () => {
      for (const authorization of [
        basic('sandbox-client', 'wrong'),
        basic('nobody', 'sandbox-secret'),
        undefined,
      ]) {
        const answer = await tokenRequest(sandbox, authorization, {
          grant_type: 'client_credentials',
        });
        expect(answer.status).toBe(401);
        expect(answer.body.error).toBe('invalid_client');
        expect(answer.headers.get('www-authenticate')).toMatch(/^Basic/);
      }
    });

    it('answers 400 to a missing or unsupported grant type and to a JSON body', async () => {
      const auth = basic('sandbox-client', 'sandbox-secret');
      expect((await tokenRequest(sandbox, auth, {})).body.error).toBe('invalid_request');
      const password = await tokenRequest(sandbox, auth, { grant_type: 'password' });
      expect(password.status).toBe(400);
      expect(password.body.error).toBe('unsupported_grant_type');
      const json = await call('POST', `${sandbox.partnerUrl}/auth/token`, {
        headers: { authorization: auth },
        body: { grant_type: 'client_credentials' },
      });
      expect(json.status).toBe(400);
      expect(json.body.error).toBe('invalid_request');
    });
  });

  describe('bearer tokens', () => {
    it('GET /partner/auth/ping describes a valid token', async () => {
      const token = await fetchToken(sandbox);
      const answer = await call('GET', `${sandbox.partnerUrl}/auth/ping`, { token });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        ok: true,
        clientId: 'sandbox-client',
        scopes: [CREATE, UPDATE, READ],
        expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    });

    it('answers 401 unauthorized without a token or with an unknown one', async () => {
      for (const token of [undefined, 'sbx_not-a-token']) {
        const answer = await call<ErrorBody>('POST', `${sandbox.url}/api/payments`, {
          ...(token === undefined ? {} : { token }),
          body: paymentBody(),
        });
        expect(answer.status).toBe(401);
        expect(answer.body.code).toBe('unauthorized');
        expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    });

    it('expires a token when the virtual clock passes its lifetime (token_expired)', async () => {
      const token = await fetchToken(sandbox);
      const ping = () => call<ErrorBody>('GET', `${sandbox.partnerUrl}/auth/ping`, { token });
      await control(sandbox, 'POST', '/clock/advance', { minutes: 59 });
      expect((await ping()).status).toBe(200);
      await control(sandbox, 'POST', '/clock/advance', { minutes: 1 });
      const expired = await ping();
      expect(expired.status).toBe(401);
      expect(expired.body.code).toBe('token_expired');
    });

    it('forgets tokens on reset', async () => {
      const token = await fetchToken(sandbox);
      await control(sandbox, 'POST', '/reset');
      expect((await call('GET', `${sandbox.partnerUrl}/auth/ping`, { token })).status).toBe(401);
    });
  });

  describe('scopes', () => {
    it('a client with only the create scope can create but not refund (403)', async () => {
      await control(sandbox, 'POST', '/clients', {
        clientId: 'creator',
        clientSecret: 'secret',
        scopes: [CREATE],
        organizationIds: ['org-1'],
      });
      const token = await fetchToken(sandbox, 'creator', 'secret');
      const payment = await createPayment(sandbox, token);
      const refund = await call<ErrorBody>('POST', `${sandbox.url}/api/refund`, {
        token,
        body: { crossPayment: payment.id, currency: 'NOK', totalGrossAmount: 1, totalNetAmount: 1 },
      });
      expect(refund.status).toBe(403);
      expect(refund.body.code).toBe('insufficient_scope');
      // the spec shows no scope for reading a status: a valid token is enough
      const status = await call<ErrorBody>(
        'GET',
        `${sandbox.url}/api/payments/${payment.id}/paymentStatus`,
        { token },
      );
      expect(status.status).toBe(200);
      // ping needs no scope
      expect((await call('GET', `${sandbox.partnerUrl}/auth/ping`, { token })).status).toBe(200);
    });

    it('a token without any scope reaches every endpoint whose scope the spec does not show', async () => {
      await control(sandbox, 'POST', '/clients', {
        clientId: 'plain',
        clientSecret: 'secret',
        scopes: [],
        organizationIds: ['org-1'],
      });
      const full = await fetchToken(sandbox);
      const token = await fetchToken(sandbox, 'plain', 'secret');
      const payment = await createPayment(sandbox, full, {
        total: 100,
        installments: [
          { date: '2030-01-01', grossAmount: 50 },
          { date: '2030-02-01', grossAmount: 50 },
        ],
      });
      const other = await createPayment(sandbox, full);
      const [first] = payment.installments ?? [];
      const api = `${sandbox.url}/api/payments`;
      const partner = sandbox.partnerUrl;
      const calls: [string, string, unknown?][] = [
        ['GET', `${api}/${payment.id}/paymentStatus`],
        ['GET', `${api}/${payment.id}/installments/${first?.id ?? ''}`],
        ['PUT', `${api}/${payment.id}/installments/${first?.id ?? ''}`, { date: '2030-01-02' }],
        [
          'POST',
          `${api}/${payment.id}/installments/create`,
          { date: '2030-03-01', grossAmount: 1 },
        ],
        ['DELETE', `${api}/${payment.id}/installments/${first?.id ?? ''}`],
        [
          'POST',
          `${api}/uploadDocument`,
          {
            paymentId: payment.id,
            fileName: 'a.txt',
            contentType: 'text/plain',
            contentBase64: 'aGk=',
          },
        ],
        ['GET', `${partner}/auth/organizations`],
        ['GET', `${partner}/payment-methods`],
        ['GET', `${partner}/settlements/generate_csv?from=2030-01-01&to=2030-01-01`],
        [
          'POST',
          `${partner}/payment-methods/resend`,
          { paymentId: payment.id, paymentMethodId: '000000000000000000000000' },
        ],
        ['POST', `${partner}/payments/${payment.id}/manual-paid`, {}],
        ['POST', `${partner}/payments/${payment.id}/receipts/terminal/print`, {}],
        ['DELETE', `${api}/${other.id}`],
      ];
      for (const [method, url, body] of calls) {
        const answer = await call(method, url, { token, ...(body === undefined ? {} : { body }) });
        expect({ method, url, status: answer.status }).toEqual({ method, url, status: 200 });
      }
      const create = await call<ErrorBody>('POST', `${sandbox.url}/api/payments`, {
        token,
        body: paymentBody(),
      });
      expect(create.status).toBe(403);
      expect(create.body.code).toBe('insufficient_scope');
    });

    it('a read-only token cannot create a payment', async () => {
      const token = await fetchToken(sandbox, 'sandbox-client', 'sandbox-secret', READ);
      const answer = await call<ErrorBody>('POST', `${sandbox.url}/api/payments`, {
        token,
        body: paymentBody(),
      });
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe('insufficient_scope');
    });
  });

  describe('X-Organization-Id', () => {
    let token: string;

    beforeEach(async () => {
      await control(sandbox, 'POST', '/organizations', { id: 'org-2', name: 'Second' });
      await control(sandbox, 'POST', '/organizations', { id: 'org-3' });
      await control(sandbox, 'POST', '/clients', {
        clientId: 'multi',
        clientSecret: 'secret',
        scopes: [CREATE, UPDATE, READ],
        organizationIds: ['org-1', 'org-2'],
      });
      token = await fetchToken(sandbox, 'multi', 'secret');
    });

    it('is required for a client of several organizations: 422 at header', async () => {
      const answer = await call<ValidationBody>('POST', `${sandbox.url}/api/payments`, {
        token,
        body: paymentBody(),
      });
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toEqual([
        { loc: ['header', 'X-Organization-Id'], msg: expect.any(String), type: expect.any(String) },
      ]);
    });

    it('selects the organization, and an organization not of the client is 403', async () => {
      const created = await createPayment(sandbox, token, {}, 'org-2');
      const inOrg2 = await call<{ merchantId: string }>(
        'GET',
        `${sandbox.url}/api/payments/${created.id}/paymentStatus`,
        { token, organizationId: 'org-2' },
      );
      expect(inOrg2.body.merchantId).toBe('org-2');
      // the payment is not visible from the other organization
      const inOrg1 = await call<ErrorBody>(
        'GET',
        `${sandbox.url}/api/payments/${created.id}/paymentStatus`,
        { token, organizationId: 'org-1' },
      );
      expect(inOrg1.status).toBe(404);
      const forbidden = await call<ErrorBody>('POST', `${sandbox.url}/api/payments`, {
        token,
        organizationId: 'org-3',
        body: paymentBody(),
      });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.code).toBe('organization_forbidden');
    });

    it('is optional for a single-organization client, and must then match', async () => {
      const single = await fetchToken(sandbox);
      await createPayment(sandbox, single);
      await createPayment(sandbox, single, {}, 'org-1');
      const other = await call('POST', `${sandbox.url}/api/payments`, {
        token: single,
        organizationId: 'org-2',
        body: paymentBody(),
      });
      expect(other.status).toBe(403);
    });

    it('GET /partner/auth/organizations lists the client organizations', async () => {
      const answer = await call('GET', `${sandbox.partnerUrl}/auth/organizations`, { token });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        organizations: [
          { id: 'org-1', name: 'Sandbox Organization' },
          { id: 'org-2', name: 'Second' },
        ],
      });
    });
  });
});
