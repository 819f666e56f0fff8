/**
 * PayflowClient against the real sandbox over HTTP: all 18 endpoints, money in minor units
 * for 0/2/3-decimal currencies, the organization header, token expiry and refresh, single
 * flight, 401 handling, and the sandbox's fault injection (429 + Retry-After, 5xx, resets and
 * latency before or after processing) for retries and the `reached` classification.
 *
 * Requests are counted on the wire by a small proxy between the client and the sandbox
 * (support/counting-proxy.ts); the sandbox's control API is called directly.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { PayflowClient } from '../../src/payflow/payflow.client.js';
import {
  PayflowError,
  PayflowValidationError,
  type PayflowReached,
} from '../../src/payflow/payflow.errors.js';
import {
  DEFAULT_PAYMENT_METHOD_ID,
  PAYFLOW_SCOPES,
  SETTLEMENT_CSV_COLUMNS,
} from '../../src/payflow/wire/payflow.schemas.js';
import type { CreatePaymentInput, PayflowClientOptions } from '../../src/payflow/payflow.types.js';
import {
  SANDBOX_CLIENT_ID,
  SANDBOX_CLIENT_SECRET,
  startTestSandbox,
  type SandboxHandle,
} from '../support/sandbox.js';
import { startCountingProxy, type CountingProxy } from './support/counting-proxy.js';
import { failure } from './support/failure.js';

const CLIENT_ID = SANDBOX_CLIENT_ID;
const CLIENT_SECRET = SANDBOX_CLIENT_SECRET;
const TOKEN_PATH = '/partner/auth/token';
const ID = /^[0-9a-f]{24}$/;

let sandbox: SandboxHandle;
let proxy: CountingProxy;
const clients: PayflowClient[] = [];

function makeClient(overrides: Partial<PayflowClientOptions> = {}, via = proxy.url): PayflowClient {
  const client = new PayflowClient({
    baseUrl: via,
    partnerBaseUrl: `${via}/partner`,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    requestTimeoutMs: 5000,
    retryBaseDelayMs: 20,
    retryMaxDelayMs: 100,
    ...overrides,
  });
  clients.push(client);
  return client;
}

async function control<T = unknown>(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  target: SandboxHandle = sandbox,
): Promise<T> {
  const response = await request(`${target.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) {
    throw new Error(`control ${method} ${path}: ${response.statusCode} ${text}`);
  }
  return JSON.parse(text) as T;
}

interface FaultSpec {
  method?: string;
  path: string;
  status?: number;
  latencyMs?: number;
  retryAfterSeconds?: number;
  times?: number;
  reset?: boolean;
  afterProcessing?: boolean;
}
const fault = (spec: FaultSpec): Promise<unknown> => control('POST', '/sandbox/faults', spec);

interface SandboxPaymentsView {
  payments: { id: string; status?: string; paymentStatus?: string; body?: unknown }[];
}
const sandboxPayments = async (): Promise<SandboxPaymentsView['payments']> =>
  (await control<SandboxPaymentsView>('GET', '/sandbox/payments')).payments;

function expectFailure(
  error: PayflowError,
  code: string,
  reached: PayflowReached,
  transient: boolean,
): void {
  expect({ code: error.code, reached: error.reached, transient: error.transient }).toEqual({
    code,
    reached,
    transient,
  });
}

function utcDate(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

function paymentInput(
  overrides: { currency?: string; gross?: number; net?: number; installments?: number[] } = {},
): CreatePaymentInput {
  const currency = overrides.currency ?? 'NOK';
  const gross = overrides.gross ?? 156_250;
  const net = overrides.net ?? 125_000;
  return {
    customer: {
      type: 'person',
      firstName: 'Kari',
      lastName: 'Nordmann',
      email: 'kari@example.com',
      phone: { countryCode: '+47', number: '41234567' },
    },
    order: { orderNumber: 'SO-10042', objects: [{ type: 'newCar', brand: 'Volvo' }] },
    payment: {
      currency,
      totalGrossAmountMinor: gross,
      totalNetAmountMinor: net,
      dueDate: utcDate(14),
      internalRef: 'SO-10042',
      items: [
        {
          description: 'Service',
          quantity: 1,
          taxRate: 25,
          netUnitPriceMinor: net,
          grossUnitPriceMinor: gross,
          netTotalPriceMinor: net,
          grossTotalPriceMinor: gross,
          vatAmountMinor: gross - net,
          lineType: 'regular',
        },
      ],
      installments:
        overrides.installments === undefined
          ? undefined
          : overrides.installments.map((amount, index) => ({
              date: utcDate(index * 30),
              grossAmountMinor: amount,
            })),
    },
  };
}

beforeAll(async () => {
  sandbox = await startTestSandbox();
  proxy = await startCountingProxy(sandbox.url);
});

afterAll(async () => {
  await proxy.close();
  await sandbox.close();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

// ================================================================ the 18 endpoints

describe('every endpoint against the sandbox', () => {
  let client: PayflowClient;
  let paymentId = '';
  let installmentId = '';
  let documentId = '';

  beforeAll(async () => {
    await control('POST', '/sandbox/reset');
    client = new PayflowClient({
      baseUrl: sandbox.url,
      partnerBaseUrl: sandbox.partnerUrl,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
  });
  afterAll(async () => {
    await client.close();
  });

  it('POST /auth/token: issueToken, the token hidden from printing', async () => {
    const token = await client.issueToken();
    expect(token.tokenType.toLowerCase()).toBe('bearer');
    expect(token.expiresInSeconds).toBe(3600);
    expect([...token.scopes].sort()).toEqual(Object.values(PAYFLOW_SCOPES).sort());
    expect(token.accessToken.reveal().length).toBeGreaterThan(10);
    expect(JSON.stringify(token)).not.toContain(token.accessToken.reveal());
    expect(String(token.accessToken)).toBe('[redacted]');
    const narrow = await client.issueToken({ scopes: [PAYFLOW_SCOPES.read] });
    expect(narrow.scopes).toEqual([PAYFLOW_SCOPES.read]);
    const refused = await failure(client.issueToken({ scopes: ['organization:payflow:admin'] }));
    expect(refused).toMatchObject({
      code: 'PAYFLOW.CLIENT_ERROR',
      status: 400,
      payflowCode: 'invalid_scope',
    });
  });

  it('GET /auth/ping', async () => {
    await expect(client.ping()).resolves.toMatchObject({ ok: true, clientId: CLIENT_ID });
  });

  it('GET /auth/organizations', async () => {
    const organizations = await client.listOrganizations();
    expect(organizations.map((organization) => organization.id)).toEqual(['org-1']);
  });

  it('GET /payment-methods', async () => {
    const methods = await client.listPaymentMethods();
    expect(methods.map((method) => method.id)).toContain(DEFAULT_PAYMENT_METHOD_ID);
    expect(methods.find((method) => method.type === 'terminal')?.terminals?.length).toBeGreaterThan(
      0,
    );
  });

  it('POST /api/payments: amounts sent as major-unit numbers, answered in minor units', async () => {
    const created = await client.createPayment(
      paymentInput({ gross: 124_950, net: 99_960, installments: [62_475, 62_475] }),
    );
    expect(created.id).toMatch(ID);
    expect(created.paymentLink).toMatch(/^https:\/\/.+/);
    expect(created.currency).toBe('NOK');
    expect(created.installments?.map((installment) => installment.grossAmountMinor)).toEqual([
      62_475, 62_475,
    ]);
    expect(created.installments?.map((installment) => installment.type)).toEqual([
      'initial',
      'scheduled',
    ]);
    paymentId = created.id;
    const stored = await control<Record<string, unknown>>('GET', `/sandbox/payments/${paymentId}`);
    expect(JSON.stringify(stored)).toContain('"totalGrossAmount":1249.5');
  });

  it('GET /api/payments/{id}/paymentStatus', async () => {
    const status = await client.getPaymentStatus(paymentId);
    expect(status).toMatchObject({
      paymentId,
      status: 'DRAFT',
      currency: 'NOK',
      totalAmountMinor: 124_950,
      merchantId: 'org-1',
    });
    expect(status.paymentNumber).toBeGreaterThanOrEqual(1000);
    expect(status.installments).toHaveLength(2);
  });

  it('POST …/installments/create', async () => {
    const installment = await client.installment(
      { action: 'create', paymentId, input: { date: utcDate(90), grossAmountMinor: 10_050 } },
      { currency: 'NOK' },
    );
    expect(installment).toMatchObject({
      status: 'CREATED',
      grossAmountMinor: 10_050,
      currency: 'NOK',
    });
    installmentId = installment.id;
    expect((await client.getPaymentStatus(paymentId)).totalAmountMinor).toBe(135_000);
  });

  it('GET …/installments/{id}', async () => {
    const installment = await client.installment(
      { action: 'get', paymentId, installmentId },
      { currency: 'NOK' },
    );
    expect(installment).toMatchObject({ id: installmentId, grossAmountMinor: 10_050 });
  });

  it('PUT …/installments/{id}', async () => {
    const installment = await client.installment(
      { action: 'update', paymentId, installmentId, input: { grossAmountMinor: 20_001 } },
      { currency: 'NOK' },
    );
    expect(installment.grossAmountMinor).toBe(20_001);
    expect((await client.getPaymentStatus(paymentId)).totalAmountMinor).toBe(144_951);
  });

  it('DELETE …/installments/{id}', async () => {
    const installment = await client.installment(
      { action: 'delete', paymentId, installmentId },
      { currency: 'NOK' },
    );
    expect(installment.status).toBe('CANCELLED');
    expect((await client.getPaymentStatus(paymentId)).totalAmountMinor).toBe(124_950);
  });

  it('POST /api/payments/uploadDocument', async () => {
    const document = await client.uploadDocument({
      paymentId,
      fileName: 'invoice.pdf',
      contentType: 'application/pdf',
      contentBase64: Buffer.from('%PDF-1.4 test').toString('base64'),
    });
    expect(document).toMatchObject({ paymentId, fileName: 'invoice.pdf', size: 13 });
    documentId = document.id;
    const status = await client.getPaymentStatus(paymentId);
    expect(status.files.map((file) => file.id)).toEqual([documentId]);
  });

  it('DELETE /api/payments/uploadDocument/{id}/{document}', async () => {
    await expect(client.deleteDocument(paymentId, documentId)).resolves.toEqual({
      id: documentId,
      deleted: true,
    });
    const again = await failure(client.deleteDocument(paymentId, documentId));
    expectFailure(again, 'PAYFLOW.NOT_FOUND', 'yes', false);
  });

  it('POST /payment-methods/resend', async () => {
    const methods = await client.listPaymentMethods();
    const terminal = methods.find((method) => method.type === 'terminal');
    const result = await client.resendPayment({
      paymentId,
      paymentMethodId: terminal?.id ?? '',
      terminalId: terminal?.terminals?.[0]?.id,
    });
    expect(result).toMatchObject({ paymentId, status: 'accepted' });
    const missing = await failure(
      client.resendPayment({ paymentId, paymentMethodId: terminal?.id ?? '' }),
    );
    expect((missing as PayflowValidationError).detail[0]?.type).toBe('business.terminal_required');
  });

  it('POST /payments/{id}/manual-paid', async () => {
    await expect(client.markPaid(paymentId, { note: 'paid by bank transfer' })).resolves.toEqual({
      paymentId,
      paymentStatus: 'PAID',
    });
    const final = await failure(client.markPaid(paymentId));
    expect((final as PayflowValidationError).detail[0]?.type).toBe('business.payment_final');
  });

  it('POST /payments/{id}/receipts/terminal/print', async () => {
    const receipt = await client.printTerminalReceipt(paymentId);
    expect(receipt).toMatchObject({ paymentId, status: 'printed' });
    expect(receipt.terminalId.length).toBeGreaterThan(0);
  });

  it('POST /api/refund', async () => {
    const refund = await client.refund({
      paymentId,
      currency: 'NOK',
      totalGrossAmountMinor: 12_495,
      totalNetAmountMinor: 9_996,
      invoiceLines: [
        {
          description: 'Goodwill',
          grossUnitPriceMinor: 12_495,
          netUnitPriceMinor: 9_996,
          quantity: 1,
          vatAmountMinor: 2_499,
          taxRate: 25,
        },
      ],
    });
    expect(refund).toMatchObject({
      refundType: 'partial',
      currency: 'NOK',
      originalAmountMinor: 124_950,
      grossRefundedAmountMinor: 12_495,
      netRefundedAmountMinor: 9_996,
      remainingAmountMinor: 112_455,
    });
    const tooMuch = await failure(
      client.refund({
        paymentId,
        currency: 'NOK',
        totalGrossAmountMinor: 112_456,
        totalNetAmountMinor: 1,
      }),
    );
    expect(tooMuch).toBeInstanceOf(PayflowValidationError);
    expect((tooMuch as PayflowValidationError).detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'totalGrossAmount'],
        type: 'business.refund_exceeds_remaining',
      }),
    ]);
  });

  it('GET /settlements/generate_csv: streamed, with a collected payment and the refund', async () => {
    // Manual-paid money did not pass through Payflow (no movement); a payer's payment does.
    const collected = await client.createPayment(paymentInput({ gross: 124_950, net: 99_960 }));
    await control('POST', `/sandbox/payments/${collected.id}/simulate`, { action: 'paid' });
    const csv = await client.generateSettlementCsv({ from: utcDate(-1), to: utcDate(1) });
    expect(csv.contentType).toMatch(/^text\/csv/);
    const text = await csv.text();
    const [header, ...rows] = text.trimEnd().split('\r\n');
    expect(header).toBe(SETTLEMENT_CSV_COLUMNS.join(','));
    const refunds = rows.filter((row) => row.includes(paymentId));
    expect(refunds).toEqual([expect.stringContaining(',refund,NOK,-124.95,')]);
    const payments = rows.filter((row) => row.includes(collected.id));
    expect(payments).toEqual([expect.stringContaining(',payment,NOK,1249.50,')]);
    const empty = await client.generateSettlementCsvText({ from: '2001-01-01', to: '2001-01-02' });
    expect(empty).toBe(`${SETTLEMENT_CSV_COLUMNS.join(',')}\r\n`);
  });

  it('DELETE /api/payments/{id}: cancels, answered with the status after cancelling', async () => {
    const created = await client.createPayment(paymentInput({ installments: [100_000, 56_250] }));
    const cancelled = await client.cancelPayment(created.id, { currency: 'NOK' });
    expect(cancelled.status).toBe('REJECTED');
    expect(cancelled.installments.map((installment) => installment.status)).toEqual([
      'CANCELLED',
      'CANCELLED',
    ]);
    const again = await failure(client.cancelPayment(created.id));
    expect((again as PayflowValidationError).detail[0]?.type).toBe('business.payment_final');
  });

  it.each([
    ['JPY', 156_250, 125_000],
    ['KWD', 1_234_567, 987_654],
    ['NOK', 5, 4],
  ])('money round-trips exactly in %s', async (currency, gross, net) => {
    const created = await client.createPayment(
      paymentInput({ currency, gross, net, installments: [gross] }),
    );
    expect(created.installments?.[0]?.grossAmountMinor).toBe(gross);
    const status = await client.getPaymentStatus(created.id, { currency });
    expect(status.totalAmountMinor).toBe(gross);
    expect(status.currency).toBe(currency);
  });
});

// ================================================================ errors and organizations

describe('errors and organizations', () => {
  beforeEach(async () => {
    await control('POST', '/sandbox/reset');
    proxy.clear();
  });

  it('422 surfaces detail[]; nothing was created', async () => {
    const error = await failure(
      makeClient().createPayment(paymentInput({ installments: [100_000, 50_000] })),
    );
    expect(error).toBeInstanceOf(PayflowValidationError);
    expectFailure(error, 'PAYFLOW.VALIDATION', 'yes', false);
    expect(error.mayHaveTakenEffect).toBe(false);
    expect((error as PayflowValidationError).detail[0]?.type).toBe(
      'business.installments_sum_mismatch',
    );
    expect(error.message).not.toContain('kari@example.com');
    expect(await sandboxPayments()).toHaveLength(0);
  });

  it('404 is NOT_FOUND and not retried', async () => {
    const error = await failure(makeClient().getPaymentStatus('f'.repeat(24)));
    expectFailure(error, 'PAYFLOW.NOT_FOUND', 'yes', false);
    expect(proxy.count('GET', /paymentStatus$/)).toBe(1);
  });

  it('a missing scope is FORBIDDEN (insufficient_scope)', async () => {
    const error = await failure(
      makeClient({ scopes: [PAYFLOW_SCOPES.read] }).createPayment(paymentInput()),
    );
    expectFailure(error, 'PAYFLOW.FORBIDDEN', 'yes', false);
    expect(error.payflowCode).toBe('insufficient_scope');
  });

  it('wrong client credentials: UNAUTHORIZED from the token request, the call unsent', async () => {
    const error = await failure(
      makeClient({ clientSecret: 'wrong' }).createPayment(paymentInput()),
    );
    expectFailure(error, 'PAYFLOW.UNAUTHORIZED', 'no', true);
    expect(error).toMatchObject({
      endpoint: 'createPayment',
      stage: 'token',
      payflowCode: 'invalid_client',
    });
    expect(proxy.count('POST', TOKEN_PATH)).toBe(1);
    expect(proxy.count('POST', '/api/payments')).toBe(0);
  });

  it('X-Organization-Id: required for a client of several organizations, checked against them', async () => {
    await control('POST', '/sandbox/organizations', {
      id: 'org-2',
      name: 'Second',
      currency: 'SEK',
    });
    await control('POST', '/sandbox/organizations', { id: 'org-3', name: 'Third' });
    await control('POST', '/sandbox/clients', {
      clientId: 'multi',
      clientSecret: 'multi-secret',
      scopes: Object.values(PAYFLOW_SCOPES),
      organizationIds: ['org-1', 'org-2'],
    });
    const client = makeClient({ clientId: 'multi', clientSecret: 'multi-secret' });
    const missing = await failure(client.createPayment(paymentInput()));
    expect((missing as PayflowValidationError).detail[0]?.loc).toEqual([
      'header',
      'X-Organization-Id',
    ]);
    const created = await client.createPayment(paymentInput({ currency: 'SEK' }), {
      organizationId: 'org-2',
    });
    const status = await client.getPaymentStatus(created.id, { organizationId: 'org-2' });
    expect(status.merchantId).toBe('org-2');
    const foreign = await failure(client.getPaymentStatus(created.id, { organizationId: 'org-3' }));
    expectFailure(foreign, 'PAYFLOW.FORBIDDEN', 'yes', false);
    expect(foreign.payflowCode).toBe('organization_forbidden');
    const organizations = await client.listOrganizations();
    expect(organizations.map((organization) => organization.id).sort()).toEqual(['org-1', 'org-2']);
  });
});

// ================================================================ tokens

describe('token lifecycle', () => {
  beforeEach(async () => {
    await control('POST', '/sandbox/reset');
    proxy.clear();
  });

  it('single flight: 50 concurrent calls on a cold client make one token request', async () => {
    const client = makeClient();
    const { id } = await makeClient().createPayment(paymentInput());
    proxy.clear();
    const results = await Promise.all(
      Array.from({ length: 50 }, () => client.getPaymentStatus(id)),
    );
    expect(results.every((status) => status.paymentId === id)).toBe(true);
    expect(proxy.count('POST', TOKEN_PATH)).toBe(1);
    expect(proxy.count('GET', /paymentStatus$/)).toBe(50);
  });

  it('a token expired on the sandbox clock: 401, one refresh for all callers, calls succeed', async () => {
    const client = makeClient();
    const { id } = await client.createPayment(paymentInput());
    await control('POST', '/sandbox/clock/advance', { minutes: 61 });
    proxy.clear();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => client.getPaymentStatus(id)),
    );
    expect(results).toHaveLength(20);
    const statuses = proxy.requests.filter((entry) => entry.path.endsWith('/paymentStatus'));
    expect(statuses.filter((entry) => entry.status === 401).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((entry) => entry.status === 200)).toHaveLength(20);
    expect(proxy.count('POST', TOKEN_PATH)).toBe(1);
  });

  it('refreshes before expiry with a short token lifetime, so no call meets a 401', async () => {
    const short = await startTestSandbox({ tokenTtlSeconds: 2 });
    const shortProxy = await startCountingProxy(short.url);
    try {
      const client = makeClient({}, shortProxy.url);
      await client.ping();
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await client.ping();
      await client.ping();
      expect(shortProxy.count('POST', TOKEN_PATH)).toBe(2);
      expect(shortProxy.requests.filter((entry) => entry.status === 401)).toHaveLength(0);
      expect(shortProxy.count('GET', '/partner/auth/ping')).toBe(3);
    } finally {
      await shortProxy.close();
      await short.close();
    }
  });

  it('a 401 is answered by one refresh; a second 401 is final', async () => {
    const client = makeClient();
    await client.ping();
    await fault({ method: 'GET', path: '/partner/auth/ping', status: 401, times: 1 });
    await expect(client.ping()).resolves.toMatchObject({ ok: true });
    expect(proxy.count('POST', TOKEN_PATH)).toBe(2);
    expect(proxy.count('GET', '/partner/auth/ping')).toBe(3);

    await fault({ method: 'GET', path: '/partner/auth/ping', status: 401, times: 2 });
    const error = await failure(client.ping());
    expectFailure(error, 'PAYFLOW.UNAUTHORIZED', 'yes', false);
    expect(proxy.count('POST', TOKEN_PATH)).toBe(3);
    expect(proxy.count('GET', '/partner/auth/ping')).toBe(5);
  });
});

// ================================================================ faults: retries and `reached`

describe('faults: retries, rate limits and reached', () => {
  const STATUS = '/api/payments/*/paymentStatus';
  let paymentId = '';

  beforeEach(async () => {
    await control('POST', '/sandbox/reset');
    paymentId = (await makeClient().createPayment(paymentInput())).id;
    proxy.clear();
  });

  it('429 with Retry-After on a GET: waits, retries, succeeds', async () => {
    await fault({ method: 'GET', path: STATUS, status: 429, retryAfterSeconds: 1, times: 1 });
    const client = makeClient();
    await client.ping();
    const started = Date.now();
    await expect(client.getPaymentStatus(paymentId)).resolves.toMatchObject({ paymentId });
    const attempts = proxy.requests.filter((entry) => entry.path.endsWith('/paymentStatus'));
    expect(attempts.map((entry) => entry.status)).toEqual([429, 200]);
    expect((attempts[1]?.at ?? 0) - (attempts[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('429 on a POST: RATE_LIMITED to the caller, and the gate holds the next calls', async () => {
    await fault({
      method: 'POST',
      path: '/api/payments',
      status: 429,
      retryAfterSeconds: 1,
      times: 1,
    });
    const client = makeClient();
    await client.ping();
    const error = await failure(client.createPayment(paymentInput()));
    expectFailure(error, 'PAYFLOW.RATE_LIMITED', 'yes', true);
    expect(error.retryAfterMs).toBe(1000);
    expect(error.mayHaveTakenEffect).toBe(false);
    const limited = proxy.requests.findIndex((entry) => entry.status === 429);
    const limitedAt = proxy.requests[limited]?.at ?? 0;
    await Promise.all([client.ping(), client.getPaymentStatus(paymentId)]);
    // The requests that came after the 429 (by arrival, not by clock: the ping before it
    // can share its millisecond).
    const after = proxy.requests.slice(limited + 1).filter((entry) => entry.status === 200);
    expect(after).toHaveLength(2);
    for (const entry of after) expect(entry.at - limitedAt).toBeGreaterThanOrEqual(950);
    expect(proxy.count('POST', '/api/payments')).toBe(1);
  });

  it('5xx on a GET is retried until it succeeds', async () => {
    await fault({ method: 'GET', path: STATUS, status: 503, times: 2 });
    await expect(makeClient().getPaymentStatus(paymentId)).resolves.toMatchObject({ paymentId });
    expect(proxy.count('GET', /paymentStatus$/)).toBe(3);
  });

  it('5xx on a GET: after maxAttempts the last SERVER_ERROR', async () => {
    await fault({ method: 'GET', path: STATUS, status: 502, times: 10 });
    const error = await failure(makeClient().getPaymentStatus(paymentId));
    expectFailure(error, 'PAYFLOW.SERVER_ERROR', 'yes', true);
    expect(error.attempt).toBe(3);
    expect(proxy.count('GET', /paymentStatus$/)).toBe(3);
  });

  it('408 on a PUT is a transient TIMEOUT and retried', async () => {
    const client = makeClient();
    const created = await client.createPayment(paymentInput({ installments: [100_000, 56_250] }));
    const installment = created.installments?.[1]?.id ?? '';
    await fault({ method: 'PUT', path: '/api/payments/*/installments/*', status: 408, times: 1 });
    const updated = await client.installment(
      {
        action: 'update',
        paymentId: created.id,
        installmentId: installment,
        input: { date: utcDate(45) },
      },
      { currency: 'NOK' },
    );
    expect(updated.date).toBe(utcDate(45));
    expect(proxy.count('PUT', /\/installments\//)).toBe(2);
  });

  it('5xx on a POST is not retried: SERVER_ERROR, reached yes; the fault ran before processing', async () => {
    await fault({ method: 'POST', path: '/api/payments', status: 500, times: 1 });
    const error = await failure(makeClient().createPayment(paymentInput()));
    expectFailure(error, 'PAYFLOW.SERVER_ERROR', 'yes', true);
    expect(error.mayHaveTakenEffect).toBe(true);
    expect(proxy.count('POST', '/api/payments')).toBe(1);
    expect(await sandboxPayments()).toHaveLength(1);
  });

  it('5xx after processing: the same error, and the payment does exist (why the caller checks)', async () => {
    await fault({
      method: 'POST',
      path: '/api/payments',
      status: 500,
      times: 1,
      afterProcessing: true,
    });
    const error = await failure(makeClient().createPayment(paymentInput()));
    expectFailure(error, 'PAYFLOW.SERVER_ERROR', 'yes', true);
    expect(error.mayHaveTakenEffect).toBe(true);
    expect(proxy.count('POST', '/api/payments')).toBe(1);
    expect(await sandboxPayments()).toHaveLength(2);
  });

  it('connection reset before processing: NETWORK, reached maybe, not retried, nothing created', async () => {
    await fault({ method: 'POST', path: '/api/payments', reset: true, times: 1 });
    const error = await failure(makeClient().createPayment(paymentInput()));
    expectFailure(error, 'PAYFLOW.NETWORK', 'maybe', true);
    expect(proxy.count('POST', '/api/payments')).toBe(1);
    expect(await sandboxPayments()).toHaveLength(1);
  });

  it('connection reset after processing: NETWORK, reached maybe, and the payment exists', async () => {
    await fault({
      method: 'POST',
      path: '/api/payments',
      reset: true,
      times: 1,
      afterProcessing: true,
    });
    const error = await failure(makeClient().createPayment(paymentInput()));
    expectFailure(error, 'PAYFLOW.NETWORK', 'maybe', true);
    expect(await sandboxPayments()).toHaveLength(2);
  });

  it('a reset GET is retried', async () => {
    await fault({ method: 'GET', path: STATUS, reset: true, times: 1 });
    await expect(makeClient().getPaymentStatus(paymentId)).resolves.toMatchObject({ paymentId });
    expect(proxy.count('GET', /paymentStatus$/)).toBe(2);
  });

  it('latency beyond the time-out: TIMEOUT reached maybe; a GET retries past it', async () => {
    const client = makeClient({ requestTimeoutMs: 400 });
    await client.ping();
    await fault({ method: 'GET', path: STATUS, latencyMs: 1500, times: 1 });
    await expect(client.getPaymentStatus(paymentId)).resolves.toMatchObject({ paymentId });
    expect(proxy.count('GET', /paymentStatus$/)).toBe(2);

    await fault({ method: 'GET', path: STATUS, latencyMs: 1500, times: 3 });
    const error = await failure(client.getPaymentStatus(paymentId));
    expectFailure(error, 'PAYFLOW.TIMEOUT', 'maybe', true);
    expect(error.attempt).toBe(3);
  });

  it('a POST that times out is not retried, and may still take effect (reached maybe)', async () => {
    const client = makeClient({ requestTimeoutMs: 400 });
    await client.ping();
    await fault({
      method: 'POST',
      path: '/partner/payments/*/manual-paid',
      latencyMs: 1000,
      times: 1,
    });
    const error = await failure(client.markPaid(paymentId));
    expectFailure(error, 'PAYFLOW.TIMEOUT', 'maybe', true);
    expect(error.mayHaveTakenEffect).toBe(true);
    expect(proxy.count('POST', /manual-paid$/)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect((await client.getPaymentStatus(paymentId)).status).toBe('PAID');
  });

  it('an unreachable Payflow: NETWORK, reached no', async () => {
    const gone = await startTestSandbox();
    const url = gone.url;
    await gone.close();
    const error = await failure(makeClient({}, url).createPayment(paymentInput()));
    expectFailure(error, 'PAYFLOW.NETWORK', 'no', true);
    expect(error.stage).toBe('token');
  });
});
