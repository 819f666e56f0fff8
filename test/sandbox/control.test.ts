/**
 * The control API (CONTRACT §7 and extras), the OpenAPI document, start-up time and the
 * environment of `npm run sandbox`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { parseSandboxEnv } from '../../src/sandbox/sandbox.config.js';
import { fetchToken, startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import { call, control, paymentBody, type ValidationBody } from './helpers.js';

const SPEC_ENDPOINTS = [
  'post /api/payments',
  'post /api/payments/uploadDocument',
  'delete /api/payments/uploadDocument/{payflow_id}/{document_id}',
  'delete /api/payments/{payflow_id}',
  'post /api/refund',
  'get /api/payments/{payflow_id}/paymentStatus',
  'post /api/payments/{payflow_id}/installments/create',
  'get /api/payments/{payflow_id}/installments/{installment_id}',
  'put /api/payments/{payflow_id}/installments/{installment_id}',
  'delete /api/payments/{payflow_id}/installments/{installment_id}',
  'post /partner/auth/token',
  'get /partner/auth/ping',
  'get /partner/auth/organizations',
  'get /partner/settlements/generate_csv',
  'get /partner/payment-methods',
  'post /partner/payment-methods/resend',
  'post /partner/payments/{payment_id}/receipts/terminal/print',
  'post /partner/payments/{payment_id}/manual-paid',
];

describe('sandbox control API', () => {
  let sandbox: SandboxHandle;
  let startMs: number;

  beforeAll(async () => {
    const started = performance.now();
    sandbox = await startTestSandbox();
    startMs = performance.now() - started;
  });
  afterAll(() => sandbox.close());
  beforeEach(async () => {
    await control(sandbox, 'POST', '/reset');
  });

  it('starts well under 2 s', () => {
    expect(startMs).toBeLessThan(2000);
  });

  it('serves an OpenAPI 3.1 document of the 18 endpoints, built from the wire schemas', async () => {
    const answer = await control<{
      openapi: string;
      paths: Record<string, Record<string, { security: unknown[] }>>;
      components: {
        schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
      };
    }>(sandbox, 'GET', '/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.body.openapi).toBe('3.1.0');
    const operations = Object.entries(answer.body.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    );
    expect(operations.sort()).toEqual([...SPEC_ENDPOINTS].sort());
    const create = answer.body.components.schemas.CreatePaymentRequest;
    expect(Object.keys(create?.properties ?? {})).toEqual(
      expect.arrayContaining(['customer', 'order', 'payment', 'callback', 'paymentMethodId']),
    );
    expect(create?.required).toEqual(expect.arrayContaining(['customer', 'order', 'payment']));
    expect(answer.body.paths['/api/payments']?.post?.security).toEqual([
      { oauth2: ['organization:payflow:create'] },
    ]);
    // only the scopes the spec shows; elsewhere a valid token is enough
    const scoped = Object.entries(answer.body.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, operation]) =>
        operation.security.flatMap((entry) =>
          Object.values(entry as Record<string, string[]>)
            .flat()
            .map((scope) => `${method} ${path} ${scope}`),
        ),
      ),
    );
    expect(scoped.sort()).toEqual([
      'post /api/payments organization:payflow:create',
      'post /api/refund organization:payflow:update',
    ]);
  });

  it('declares in OpenAPI the 404 that endpoints naming a payment in their body answer', async () => {
    const answer = await control<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { required?: string[] }> };
    }>(sandbox, 'GET', '/openapi.json');
    const token = await fetchToken(sandbox);
    const unknown = 'ffffffffffffffffffffffff';
    const calls: [string, string, string, Record<string, unknown>][] = [
      [
        '/api/refund',
        'post',
        `${sandbox.url}/api/refund`,
        { crossPayment: unknown, currency: 'NOK', totalGrossAmount: 1, totalNetAmount: 1 },
      ],
      [
        '/api/payments/uploadDocument',
        'post',
        `${sandbox.url}/api/payments/uploadDocument`,
        {
          paymentId: unknown,
          fileName: 'a.pdf',
          contentType: 'application/pdf',
          contentBase64: 'AA==',
        },
      ],
      [
        '/partner/payment-methods/resend',
        'post',
        `${sandbox.partnerUrl}/payment-methods/resend`,
        { paymentId: unknown, paymentMethodId: '000000000000000000000000' },
      ],
    ];
    for (const [path, method, url, body] of calls) {
      const real = await call(method.toUpperCase(), url, { token, body });
      expect(real.status).toBe(404);
      expect({
        path,
        declared: Object.keys(answer.body.paths[path]?.[method]?.responses ?? {}),
      }).toEqual({ path, declared: expect.arrayContaining(['404']) });
    }
    // the spec: debtorAccountNumber is optional (default "")
    const refund = answer.body.components.schemas.RefundResponse;
    expect(refund?.required).not.toContain('debtorAccountNumber');
    expect(refund?.required).toEqual(
      expect.arrayContaining(['refundType', 'originalAmount', 'remainingAmount', 'refundId']),
    );
  });

  it('keeps every payment with its organization and the create body as received', async () => {
    const token = await fetchToken(sandbox);
    const body = { ...paymentBody(), somethingExtra: { kept: true } };
    const created = await call<{ id: string }>('POST', `${sandbox.url}/api/payments`, {
      token,
      body,
    });
    const listed = await control<{ payments: Record<string, unknown>[] }>(
      sandbox,
      'GET',
      '/payments',
    );
    expect(listed.body.payments).toEqual([
      expect.objectContaining({
        id: created.body.id,
        organizationId: 'org-1',
        status: 'DRAFT',
        body,
        installments: null,
        refunds: [],
        documents: [],
      }),
    ]);
  });

  it('reset forgets payments, clients, organizations, faults and the clock', async () => {
    const token = await fetchToken(sandbox);
    await call('POST', `${sandbox.url}/api/payments`, { token, body: paymentBody() });
    await control(sandbox, 'POST', '/organizations', { id: 'org-9' });
    await control(sandbox, 'PUT', '/webhook-whitelist', { domains: ['example.com'] });
    await control(sandbox, 'POST', '/faults', { path: '/**', status: 500 });
    await control(sandbox, 'POST', '/clock/advance', { minutes: 90 });
    await control(sandbox, 'POST', '/reset');
    expect(
      (await control<{ payments: unknown[] }>(sandbox, 'GET', '/payments')).body.payments,
    ).toEqual([]);
    expect((await control(sandbox, 'GET', '/faults')).body).toEqual({ faults: [] });
    expect((await control(sandbox, 'GET', '/webhook-whitelist')).body).toEqual({
      domains: ['localhost', '127.0.0.1'],
    });
    expect(
      (await control<{ offsetMinutes: number }>(sandbox, 'GET', '/clock')).body.offsetMinutes,
    ).toBe(0);
    const clientForOrg9 = await control(sandbox, 'POST', '/clients', {
      clientId: 'c',
      clientSecret: 's',
      scopes: [],
      organizationIds: ['org-9'],
    });
    expect(clientForOrg9.status).toBe(422);
  });

  it('advances the virtual clock', async () => {
    const before = await control<{ now: string }>(sandbox, 'GET', '/clock');
    const advanced = await control<{ now: string; offsetMinutes: number }>(
      sandbox,
      'POST',
      '/clock/advance',
      {
        minutes: 120,
      },
    );
    expect(Date.parse(advanced.body.now) - Date.parse(before.body.now)).toBeGreaterThanOrEqual(
      120 * 60_000,
    );
    expect(advanced.body.offsetMinutes).toBeGreaterThanOrEqual(120);
    expect((await control(sandbox, 'POST', '/clock/advance', { minutes: -1 })).status).toBe(422);
  });

  describe('POST /sandbox/clients/{clientId}/secret', () => {
    async function tokenAnswer(secret: string): Promise<{ status: number; error: unknown }> {
      const answer = await call<{ error?: string }>('POST', `${sandbox.partnerUrl}/auth/token`, {
        headers: {
          authorization: `Basic ${Buffer.from(`sandbox-client:${secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      return { status: answer.status, error: answer.body.error };
    }

    it('rotates the secret: the old one is refused at once, the new one gets tokens', async () => {
      const rotated = await control(sandbox, 'POST', '/clients/sandbox-client/secret', {
        clientSecret: 'rotated-secret',
      });
      expect(rotated.status).toBe(204);
      expect(rotated.text).toBe('');
      expect(await tokenAnswer('sandbox-secret')).toEqual({
        status: 401,
        error: 'invalid_client',
      });
      expect((await tokenAnswer('rotated-secret')).status).toBe(200);
      const token = await fetchToken(sandbox, 'sandbox-client', 'rotated-secret');
      expect((await call('GET', `${sandbox.partnerUrl}/auth/ping`, { token })).status).toBe(200);
    });

    it('leaves tokens issued under the old secret valid until they expire', async () => {
      const before = await fetchToken(sandbox);
      await control(sandbox, 'POST', '/clients/sandbox-client/secret', { clientSecret: 'next' });
      expect((await call('GET', `${sandbox.partnerUrl}/auth/ping`, { token: before })).status).toBe(
        200,
      );
      await control(sandbox, 'POST', '/clock/advance', { minutes: 61 });
      const expired = await call<{ code?: string }>('GET', `${sandbox.partnerUrl}/auth/ping`, {
        token: before,
      });
      expect(expired.status).toBe(401);
      expect(expired.body.code).toBe('token_expired');
    });

    it('answers 404 for an unknown client and 422 for a missing or empty secret', async () => {
      const unknown = await control<{ code?: string }>(sandbox, 'POST', '/clients/nobody/secret', {
        clientSecret: 'x',
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('not_found');
      for (const body of [{}, { clientSecret: '' }, { clientSecret: 42 }]) {
        const bad = await control<ValidationBody>(
          sandbox,
          'POST',
          '/clients/sandbox-client/secret',
          body,
        );
        expect(bad.status).toBe(422);
        expect(bad.body.detail[0]?.loc).toEqual(['body', 'clientSecret']);
      }
      // nothing changed
      expect((await tokenAnswer('sandbox-secret')).status).toBe(200);
    });

    it('rotates a client added through the control API, and reset restores the default', async () => {
      await control(sandbox, 'POST', '/clients', {
        clientId: 'erp-2',
        clientSecret: 'first',
        scopes: [],
        organizationIds: ['org-1'],
      });
      expect(
        (await control(sandbox, 'POST', '/clients/erp-2/secret', { clientSecret: 'second' }))
          .status,
      ).toBe(204);
      await expect(fetchToken(sandbox, 'erp-2', 'first')).rejects.toThrow(/401/);
      await expect(fetchToken(sandbox, 'erp-2', 'second')).resolves.toEqual(expect.any(String));
      await control(sandbox, 'POST', '/clients/sandbox-client/secret', { clientSecret: 'other' });
      await control(sandbox, 'POST', '/reset');
      expect((await tokenAnswer('sandbox-secret')).status).toBe(200);
    });
  });

  it('answers 404 to simulate on an unknown payment and 422 to an unknown action', async () => {
    expect(
      (await control(sandbox, 'POST', '/payments/nope/simulate', { action: 'paid' })).status,
    ).toBe(404);
    const token = await fetchToken(sandbox);
    const created = await call<{ id: string }>('POST', `${sandbox.url}/api/payments`, {
      token,
      body: paymentBody(),
    });
    const bad = await control(sandbox, 'POST', `/payments/${created.body.id}/simulate`, {
      action: 'exploded',
    });
    expect(bad.status).toBe(422);
  });
});

describe('the built-in client’s secret (SANDBOX_CLIENT_SECRET_FILE)', () => {
  it('is the one given at start, and again after a reset', async () => {
    const sandbox = await startTestSandbox({ defaultClientSecret: 'from-a-secret-file' });
    try {
      await expect(fetchToken(sandbox, 'sandbox-client', 'sandbox-secret')).rejects.toThrow(/401/);
      await expect(fetchToken(sandbox, 'sandbox-client', 'from-a-secret-file')).resolves.toEqual(
        expect.any(String),
      );
      await control(sandbox, 'POST', '/clients/sandbox-client/secret', { clientSecret: 'other' });
      await control(sandbox, 'POST', '/reset');
      await expect(fetchToken(sandbox, 'sandbox-client', 'from-a-secret-file')).resolves.toEqual(
        expect.any(String),
      );
    } finally {
      await sandbox.close();
    }
  });

  it('is read from the file SANDBOX_CLIENT_SECRET_FILE names', () => {
    expect(parseSandboxEnv({ SANDBOX_CLIENT_SECRET_FILE: '/run/secrets/payflow' })).toEqual({
      ok: true,
      env: expect.objectContaining({ SANDBOX_CLIENT_SECRET_FILE: '/run/secrets/payflow' }),
    });
    expect(parseSandboxEnv({ SANDBOX_CLIENT_SECRET_FILE: '  ' })).toEqual({
      ok: false,
      error: 'Invalid SANDBOX_CLIENT_SECRET_FILE: must not be empty',
    });
  });
});

describe('npm run sandbox environment', () => {
  it('reads the share of settlement lines booked a night late, and its seed', () => {
    expect(
      parseSandboxEnv({ SANDBOX_SETTLEMENT_LATE_PERCENT: '0', SANDBOX_SETTLEMENT_SEED: '7' }),
    ).toEqual({
      ok: true,
      env: expect.objectContaining({
        SANDBOX_SETTLEMENT_LATE_PERCENT: 0,
        SANDBOX_SETTLEMENT_SEED: 7,
      }),
    });
  });

  it('has the documented defaults', () => {
    expect(parseSandboxEnv({})).toEqual({
      ok: true,
      env: {
        SANDBOX_PORT: 4010,
        SANDBOX_HOST: '127.0.0.1',
        SANDBOX_LATENCY_MS: 0,
        SANDBOX_TOKEN_TTL_SECONDS: 3600,
        SANDBOX_SHAPES: 'standard',
        SANDBOX_LOG_LEVEL: 'info',
        SANDBOX_MAX_PAYMENTS: 25_000,
        SANDBOX_MAX_WEBHOOK_DELIVERIES: 20_000,
        SANDBOX_MAX_SETTLEMENT_MOVEMENTS: 500_000,
        SANDBOX_HEAP_GROWTH_PERCENT: 50,
        SANDBOX_SETTLEMENT_LATE_PERCENT: 10,
        SANDBOX_SETTLEMENT_SEED: 29,
      },
    });
  });

  it('names the bad variable in one line', () => {
    for (const [name, value] of [
      ['SANDBOX_PORT', '70000'],
      ['SANDBOX_PORT', 'abc'],
      ['SANDBOX_LATENCY_MS', '-5'],
      ['SANDBOX_TOKEN_TTL_SECONDS', '0'],
      ['SANDBOX_MAX_PAYMENTS', '0'],
      ['SANDBOX_MAX_WEBHOOK_DELIVERIES', 'many'],
      ['SANDBOX_MAX_SETTLEMENT_MOVEMENTS', '-1'],
      ['SANDBOX_HEAP_GROWTH_PERCENT', '401'],
      ['SANDBOX_HEAP_GROWTH_PERCENT', 'half'],
      ['SANDBOX_SETTLEMENT_LATE_PERCENT', '101'],
      ['SANDBOX_SETTLEMENT_SEED', '4294967296'],
    ] as const) {
      const result = parseSandboxEnv({ [name]: value });
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error).toMatch(new RegExp(`^Invalid ${name}: `));
        expect(result.error).not.toContain('\n');
      }
    }
  });
});
