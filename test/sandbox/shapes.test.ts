/**
 * SANDBOX_SHAPES=alternate (option `shapes`): every field the spec types `any` or leaves
 * "not shown" comes in another legal shape, and every JSON object answered (and every
 * webhook body) carries unknown fields, so that a client is tested against more than one
 * reading of the spec. The default ("standard") is what every other sandbox test checks.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { parseSandboxEnv } from '../../src/sandbox/sandbox.config.js';
import { type SandboxHandle } from '../support/sandbox.js';
import { basic, call, control, paymentBody, tokenRequest } from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';

type Json = Record<string, unknown>;
const DECIMAL_TEXT = /^\d+\.\d{2}$/;

/** Every JSON object inside `value` (itself included), with its path. */
function objectsIn(value: unknown, path = '$'): [string, Json][] {
  if (Array.isArray(value))
    return value.flatMap((entry, index) => objectsIn(entry, `${path}[${index}]`));
  if (typeof value !== 'object' || value === null) return [];
  const object = value as Json;
  return [
    [path, object],
    ...Object.entries(object).flatMap(([key, entry]) => objectsIn(entry, `${path}.${key}`)),
  ];
}

/** The field names a standard answer has; whatever else an object has is unknown. */
function expectUnknownFieldsEverywhere(value: unknown, known: (path: string) => string[]): void {
  for (const [path, object] of objectsIn(value)) {
    const unknown = Object.keys(object).filter((key) => !known(path).includes(key));
    expect({ path, unknown: unknown.length > 0 }).toEqual({ path, unknown: true });
  }
}

const INSTALLMENT_FIELDS = [
  'id',
  'date',
  'type',
  'grossAmount',
  'status',
  'numTried',
  'successfullyChargedAt',
  'numFailed',
  'lastFailedAt',
];

describe('SANDBOX_SHAPES', () => {
  it('is standard by default and takes alternate', () => {
    const standard = parseSandboxEnv({});
    expect(standard.ok && standard.env.SANDBOX_SHAPES).toBe('standard');
    const alternate = parseSandboxEnv({ SANDBOX_SHAPES: 'alternate' });
    expect(alternate.ok && alternate.env.SANDBOX_SHAPES).toBe('alternate');
    const wrong = parseSandboxEnv({ SANDBOX_SHAPES: 'weird' });
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.error).toMatch(/^Invalid SANDBOX_SHAPES: /);
  });
});

describe('sandbox alternate shapes', () => {
  let sandbox: SandboxHandle;
  let token: string;
  let api: string;

  useTestSandbox({
    options: { shapes: 'alternate' },
    started: (started) => {
      sandbox = started;
    },
    token: (fresh) => {
      token = fresh;
    },
  });
  beforeAll(() => {
    api = `${sandbox.url}/api`;
  });

  const createWithPlan = async () => {
    const answer = await call<Json>('POST', `${api}/payments`, {
      token,
      body: paymentBody({
        total: 100,
        installments: [
          { date: '2030-01-01', grossAmount: 40 },
          { date: '2030-02-01', grossAmount: 60 },
        ],
        callback: { url: 'https://127.0.0.1:1/hook' },
      }),
    });
    expect(answer.status).toBe(200);
    return answer.body;
  };

  it('token: no expires_in, unknown fields', async () => {
    const answer = await tokenRequest(sandbox, basic('sandbox-client', 'sandbox-secret'), {
      grant_type: 'client_credentials',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer' });
    expect(answer.body).not.toHaveProperty('expires_in');
    expectUnknownFieldsEverywhere(answer.body, () => [
      'access_token',
      'token_type',
      'expires_in',
      'scope',
    ]);
    const ping = await call<Json>('GET', `${sandbox.partnerUrl}/auth/ping`, {
      token: String(answer.body.access_token),
    });
    expect(ping.body.expiresAt).toEqual(expect.any(Number));
  });

  it('create answer: installment items (shape not shown) with decimal-text amounts', async () => {
    const created = await createWithPlan();
    const installments = created.installments as Json[];
    expect(installments.map((entry) => entry.grossAmount)).toEqual(['40.00', '60.00']);
    expect(installments[0]).toMatchObject({ successfullyChargedAt: null, lastFailedAt: null });
    expectUnknownFieldsEverywhere(created, (path) =>
      path === '$'
        ? ['id', '_links', 'installments']
        : path === '$._links'
          ? ['longGui', 'gui']
          : INSTALLMENT_FIELDS,
    );
  });

  it('status: date-time dueDate, epoch-millisecond times, typed amounts kept numbers', async () => {
    const created = await createWithPlan();
    const id = String(created.id);
    const first = (created.installments as Json[])[0];
    const paid = await control(sandbox, 'POST', `/payments/${id}/simulate`, {
      action: 'installment_paid',
      installmentId: first?.id,
    });
    expect(paid.status).toBe(200);
    const status = await call<Json>('GET', `${api}/payments/${id}/paymentStatus`, { token });
    expect(status.body.dueDate).toBe('2030-01-31T00:00:00.000Z');
    expect(status.body.totalAmount).toBe(100);
    const records = status.body.installments as Json[];
    expect(records[0]?.grossAmount).toBe(40);
    expect(records[0]?.successfullyChargedAt).toEqual(expect.any(Number));
    expect(Math.abs(Number(records[0]?.successfullyChargedAt) - Date.now())).toBeLessThan(
      60 * 60_000,
    );
    expect(records[1]?.successfullyChargedAt).toBeNull();
    expectUnknownFieldsEverywhere(status.body, (path) =>
      path === '$'
        ? [
            'totalAmount',
            'installments',
            'paymentId',
            'paymentNumber',
            'paymentStatus',
            'merchantId',
            'createdAt',
            'dueDate',
            'files',
            'currency',
          ]
        : path === '$.paymentStatus'
          ? ['paymentStatus']
          : INSTALLMENT_FIELDS,
    );

    const installment = await call<Json>(
      'GET',
      `${api}/payments/${id}/installments/${String(first?.id)}`,
      { token },
    );
    expect(installment.body.grossAmount).toBe(40);
    expect(installment.body.successfullyChargedAt).toEqual(expect.any(Number));

    await control(sandbox, 'POST', `/payments/${id}/simulate`, { action: 'installment_failed' });
    const failed = await call<Json>('GET', `${api}/payments/${id}/paymentStatus`, { token });
    expect((failed.body.installments as Json[])[1]?.lastFailedAt).toEqual(expect.any(Number));
  });

  it('PUT, DELETE installment and cancel (answers not shown): decimal-text amounts', async () => {
    const created = await createWithPlan();
    const id = String(created.id);
    const second = String((created.installments as Json[])[1]?.id);
    const url = `${api}/payments/${id}/installments/${second}`;
    const put = await call<Json>('PUT', url, { token, body: { grossAmount: 65 } });
    expect(put.status).toBe(200);
    expect(put.body.grossAmount).toBe('65.00');
    const added = await call<Json>('POST', `${api}/payments/${id}/installments/create`, {
      token,
      body: { date: '2030-03-01', grossAmount: 5 },
    });
    expect(added.body.grossAmount).toBe(5); // the spec types this record's amount: a number
    const deleted = await call<Json>('DELETE', url, { token });
    expect(deleted.body).toMatchObject({ grossAmount: '65.00', status: 'CANCELLED' });
    expectUnknownFieldsEverywhere(deleted.body, () => INSTALLMENT_FIELDS);
    const cancelled = await call<Json>('DELETE', `${api}/payments/${id}`, { token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.totalAmount).toBe('45.00');
    expect(cancelled.body.dueDate).toBe('2030-01-31T00:00:00.000Z');
    expect((cancelled.body.installments as Json[]).map((entry) => entry.grossAmount)).toEqual([
      '40.00',
      '65.00',
      '5.00',
    ]);
  });

  it('documents and refunds: epoch uploadedAt, no debtorAccountNumber, unknown fields', async () => {
    const created = await createWithPlan();
    const id = String(created.id);
    const upload = await call<Json>('POST', `${api}/payments/uploadDocument`, {
      token,
      body: {
        paymentId: id,
        fileName: 'a.pdf',
        contentType: 'application/pdf',
        contentBase64: 'aGVsbG8=',
      },
    });
    expect(upload.status).toBe(200);
    expect(upload.body.uploadedAt).toEqual(expect.any(Number));
    expectUnknownFieldsEverywhere(upload.body, () => [
      'id',
      'paymentId',
      'fileName',
      'contentType',
      'size',
      'uploadedAt',
    ]);
    const status = await call<Json>('GET', `${api}/payments/${id}/paymentStatus`, { token });
    expect((status.body.files as Json[])[0]?.uploadedAt).toEqual(expect.any(Number));

    await control(sandbox, 'POST', `/payments/${id}/simulate`, { action: 'paid' });
    const refund = await call<Json>('POST', `${api}/refund`, {
      token,
      body: { crossPayment: id, currency: 'NOK', totalGrossAmount: 10, totalNetAmount: 8 },
    });
    expect(refund.status).toBe(200);
    expect(refund.body).not.toHaveProperty('debtorAccountNumber');
    expect(refund.body).toMatchObject({
      refundType: 'partial',
      originalAmount: 100,
      grossRefundedAmount: 10,
      netRefundedAmount: 8,
      remainingAmount: 90,
    });
    expectUnknownFieldsEverywhere(refund.body, () => [
      'refundType',
      'debtorAccountNumber',
      'originalAmount',
      'originalCurrency',
      'grossRefundedAmount',
      'netRefundedAmount',
      'remainingAmount',
      'refundId',
    ]);
  });

  it('partner answers carry unknown fields in every object', async () => {
    const methods = await call<Json>('GET', `${sandbox.partnerUrl}/payment-methods`, { token });
    expectUnknownFieldsEverywhere(methods.body, (path) =>
      path === '$'
        ? ['paymentMethods']
        : /terminals\[\d+\]$/.test(path)
          ? ['id', 'name']
          : ['id', 'name', 'type', 'terminals', 'invoiceTypes'],
    );
    const organizations = await call<Json>('GET', `${sandbox.partnerUrl}/auth/organizations`, {
      token,
    });
    expectUnknownFieldsEverywhere(organizations.body, (path) =>
      path === '$' ? ['organizations'] : ['id', 'name'],
    );
    const created = await createWithPlan();
    const manual = await call<Json>(
      'POST',
      `${sandbox.partnerUrl}/payments/${String(created.id)}/manual-paid`,
      { token, body: {} },
    );
    expect(manual.body).toMatchObject({ paymentStatus: 'PAID' });
    expectUnknownFieldsEverywhere(manual.body, () => ['paymentId', 'paymentStatus']);
  });

  it('webhook bodies (not shown): epoch times, decimal-text amounts, unknown fields', async () => {
    const created = await createWithPlan();
    const id = String(created.id);
    await control(sandbox, 'POST', `/payments/${id}/simulate`, { action: 'opened' });
    const listed = await control<{ deliveries: { payload: Json }[] }>(
      sandbox,
      'GET',
      `/webhook-deliveries?paymentId=${id}`,
    );
    const payload = listed.body.deliveries[0]?.payload ?? {};
    expect(payload).toMatchObject({ event: 'payment.updated', change: 'opened', paymentId: id });
    expect(payload.occurredAt).toEqual(expect.any(Number));
    expect((payload.installments as Json[]).map((entry) => entry.grossAmount)).toEqual([
      '40.00',
      '60.00',
    ]);
    for (const entry of payload.installments as Json[]) {
      expect(String(entry.grossAmount)).toMatch(DECIMAL_TEXT);
    }
    expectUnknownFieldsEverywhere(payload, (path) =>
      path === '$'
        ? [
            'deliveryId',
            'event',
            'occurredAt',
            'organizationId',
            'paymentId',
            'internalRef',
            'paymentStatus',
            'installments',
            'change',
          ]
        : INSTALLMENT_FIELDS,
    );
  });
});
