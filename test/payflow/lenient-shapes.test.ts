/**
 * PayflowClient reads every reasonable JSON shape of the fields the spec types `any` or leaves
 * "not shown", end to end over HTTP against the scriptable fake
 * (test/payflow/support/fake-payflow.ts): epoch milliseconds, epoch seconds, numeric text,
 * null, absent, unknown extra fields, a date-time `dueDate`, a token answer without
 * `expires_in`. Where the spec is strict the client stays strict. Also: uploadDocument as
 * multipart/form-data (PAYFLOW_DOCUMENT_UPLOAD=multipart) arrives with the right fields.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { PayflowClient } from '../../src/payflow/payflow.client.js';
import { DEFAULT_TOKEN_LIFETIME_SECONDS } from '../../src/payflow/auth/payflow.token.js';
import type {
  CreatePaymentInput,
  PayflowClientOptions,
  UploadDocumentInput,
} from '../../src/payflow/payflow.types.js';
import {
  sendJson,
  startFakePayflow,
  tokenRoute,
  type FakeHandler,
  type FakePayflow,
  type FakeRequest,
} from './support/fake-payflow.js';
import { failure } from './support/failure.js';

const PAYMENT_ID = 'a'.repeat(24);
const INSTALLMENT_ID = 'b'.repeat(24);
const PAYMENT_PATH = `/api/payments/${PAYMENT_ID}`;
const STATUS_PATH = `${PAYMENT_PATH}/paymentStatus`;
const INSTALLMENT_PATH = `${PAYMENT_PATH}/installments/${INSTALLMENT_ID}`;
const TOKEN_PATH = '/partner/auth/token';
const UPLOAD_PATH = '/api/payments/uploadDocument';

/** One instant in every shape a server may send it. */
const AT = '2026-12-01T10:15:30.000Z';
const AT_MS = Date.parse(AT);
const AT_S = AT_MS / 1000;

/** Fields a server may add, in shapes the client must not care about. */
const UNKNOWN_FIELDS = {
  customer: { email: null, phone: 4741234567, billingAddress: 'one line' },
  installmentsMode: 3,
  paymentDepartment: { id: 7, name: 'Workshop' },
  totalNetAmount: '1000.00',
  somethingNew: [1, { nested: true }],
};

function installmentRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: INSTALLMENT_ID,
    date: '2026-12-01',
    type: 'scheduled',
    grossAmount: 781.25,
    status: 'PAID',
    numTried: 1,
    successfullyChargedAt: AT,
    numFailed: 0,
    lastFailedAt: null,
    ...overrides,
  };
}

function statusBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    totalAmount: 1562.5,
    installments: [installmentRecord()],
    paymentId: PAYMENT_ID,
    paymentNumber: 1000,
    paymentStatus: { paymentStatus: 'PENDING' },
    merchantId: 'org-1',
    createdAt: '2026-11-21T10:00:00Z',
    dueDate: '2026-12-01',
    files: [],
    currency: 'NOK',
    ...overrides,
  };
}

const document: UploadDocumentInput = {
  paymentId: PAYMENT_ID,
  fileName: 'faktura mars.pdf',
  contentType: 'application/pdf',
  // Bytes that are not UTF-8, to prove the file arrives byte for byte.
  contentBase64: Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0xfe, 0x80, 0x0a]).toString(
    'base64',
  ),
};
const DOCUMENT_BYTES = Buffer.from(document.contentBase64, 'base64');

let fake: FakePayflow;
const clients: PayflowClient[] = [];

function makeClient(overrides: Partial<PayflowClientOptions> = {}): PayflowClient {
  const client = new PayflowClient({
    baseUrl: fake.url,
    partnerBaseUrl: `${fake.url}/partner`,
    clientId: 'client',
    clientSecret: 'secret',
    requestTimeoutMs: 5000,
    retryBaseDelayMs: 10,
    retryMaxDelayMs: 50,
    ...overrides,
  });
  clients.push(client);
  return client;
}

function answer(method: string, path: string, body: unknown): void {
  fake.routes.set(`${method} ${path}`, (_request, res) => sendJson(res, 200, body));
}

/** The multipart form of a request, parsed by the platform's own form-data reader. */
async function formOf(request: FakeRequest): Promise<FormData> {
  const contentType = String(request.headers['content-type']);
  return new Response(request.rawBody, { headers: { 'content-type': contentType } }).formData();
}

beforeEach(async () => {
  fake = await startFakePayflow();
  fake.routes.set(`POST ${TOKEN_PATH}`, tokenRoute());
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await fake.close();
});

describe('times the spec types any (successfullyChargedAt, lastFailedAt)', () => {
  it.each<[string, unknown]>([
    ['ISO text with an offset', '2026-12-01T11:15:30+01:00'],
    ['epoch milliseconds', AT_MS],
    ['epoch seconds', AT_S],
    ['epoch milliseconds as text', String(AT_MS)],
    ['epoch seconds as text', String(AT_S)],
  ])('reads %s as ISO 8601 UTC text', async (_shape, shape) => {
    answer(
      'GET',
      INSTALLMENT_PATH,
      installmentRecord({ successfullyChargedAt: shape, lastFailedAt: shape }),
    );
    const installment = await makeClient().installment(
      { action: 'get', paymentId: PAYMENT_ID, installmentId: INSTALLMENT_ID },
      {
        currency: 'NOK',
      },
    );
    expect(installment.successfullyChargedAt).toBe(AT);
    expect(installment.lastFailedAt).toBe(AT);
    expect(installment.grossAmountMinor).toBe(78_125);
  });

  it('reads null, absent and empty text as null, and ignores unknown fields', async () => {
    const { lastFailedAt: _absent, ...withoutLastFailedAt } = installmentRecord({
      successfullyChargedAt: null,
      ...UNKNOWN_FIELDS,
    });
    answer('GET', INSTALLMENT_PATH, withoutLastFailedAt);
    const client = makeClient();
    const installment = await client.installment(
      { action: 'get', paymentId: PAYMENT_ID, installmentId: INSTALLMENT_ID },
      {
        currency: 'NOK',
      },
    );
    expect(installment).toMatchObject({ successfullyChargedAt: null, lastFailedAt: null });
    expect(installment.raw).toMatchObject({ installmentsMode: 3 });

    answer('GET', INSTALLMENT_PATH, installmentRecord({ successfullyChargedAt: '' }));
    const empty = await client.installment(
      { action: 'get', paymentId: PAYMENT_ID, installmentId: INSTALLMENT_ID },
      { currency: 'NOK' },
    );
    expect(empty.successfullyChargedAt).toBeNull();
  });

  it('refuses a time it cannot read, without repeating it', async () => {
    answer('GET', INSTALLMENT_PATH, installmentRecord({ lastFailedAt: 'last tuesday-ish' }));
    const error = await failure(
      makeClient().installment(
        { action: 'get', paymentId: PAYMENT_ID, installmentId: INSTALLMENT_ID },
        { currency: 'NOK' },
      ),
    );
    expect(error).toMatchObject({ code: 'PAYFLOW.BAD_RESPONSE', reached: 'yes' });
    expect(error.message).toContain('lastFailedAt');
    expect(error.message).not.toContain('tuesday');
  });
});

describe('the payment status', () => {
  it.each<[string, unknown]>([
    ['a date', '2026-12-01'],
    ['a date-time in UTC', '2026-12-01T00:00:00Z'],
    ['a date-time in an offset', '2026-12-01T00:00:00+01:00'],
    ['epoch milliseconds', Date.parse('2026-12-01T00:00:00Z')],
    ['epoch seconds', Date.parse('2026-12-01T00:00:00Z') / 1000],
    ['epoch seconds as text', String(Date.parse('2026-12-01T00:00:00Z') / 1000)],
  ])('reads dueDate given as %s as YYYY-MM-DD', async (_shape, dueDate) => {
    answer('GET', STATUS_PATH, statusBody({ dueDate }));
    const status = await makeClient().getPaymentStatus(PAYMENT_ID);
    expect(status.dueDate).toBe('2026-12-01');
    expect(status.totalAmountMinor).toBe(156_250);
  });

  it('reads a null or absent dueDate and installments, and ignores unknown fields', async () => {
    const { dueDate: _dueDate, installments: _installments, ...sparse } = statusBody();
    answer('GET', STATUS_PATH, { ...sparse, ...UNKNOWN_FIELDS });
    const client = makeClient();
    const status = await client.getPaymentStatus(PAYMENT_ID);
    expect(status).toMatchObject({ dueDate: null, installments: [], status: 'PENDING' });
    expect(status.raw).toMatchObject({ paymentDepartment: { id: 7, name: 'Workshop' } });

    answer('GET', STATUS_PATH, statusBody({ dueDate: null, installments: null, files: null }));
    await expect(client.getPaymentStatus(PAYMENT_ID)).resolves.toMatchObject({
      dueDate: null,
      installments: [],
      files: [],
    });
  });

  it('reads files[] items of any shape that has an id', async () => {
    answer(
      'GET',
      STATUS_PATH,
      statusBody({
        files: [
          { id: 'doc-1', size: '13', uploadedAt: AT_MS, checksum: 'x' },
          { id: 42, fileName: 'b.pdf' },
        ],
      }),
    );
    const status = await makeClient().getPaymentStatus(PAYMENT_ID);
    expect(status.files).toEqual([
      { id: 'doc-1', size: 13, uploadedAt: AT, checksum: 'x' },
      { id: '42', fileName: 'b.pdf', uploadedAt: null },
    ]);
  });

  it('stays strict where the spec is: totalAmount must be a JSON number', async () => {
    answer('GET', STATUS_PATH, statusBody({ totalAmount: '1562.50' }));
    const error = await failure(makeClient().getPaymentStatus(PAYMENT_ID));
    expect(error).toMatchObject({ code: 'PAYFLOW.BAD_RESPONSE' });
    expect(error.message).toContain('totalAmount');
  });
});

describe('answers the spec does not show', () => {
  it('cancel: amounts as decimal text, counts as digit text, times as epochs', async () => {
    answer(
      'DELETE',
      PAYMENT_PATH,
      statusBody({
        totalAmount: '1562.50',
        paymentNumber: '1000',
        paymentStatus: { paymentStatus: 'REJECTED' },
        installments: [
          installmentRecord({
            grossAmount: '781.25',
            numTried: '2',
            numFailed: '1',
            status: 'CANCELLED',
            successfullyChargedAt: null,
            lastFailedAt: AT_S,
          }),
        ],
        dueDate: Date.parse('2026-12-01T00:00:00Z'),
      }),
    );
    const status = await makeClient().cancelPayment(PAYMENT_ID);
    expect(status).toMatchObject({
      status: 'REJECTED',
      totalAmountMinor: 156_250,
      paymentNumber: 1000,
      dueDate: '2026-12-01',
    });
    expect(status.installments[0]).toMatchObject({
      grossAmountMinor: 78_125,
      numTried: 2,
      numFailed: 1,
      lastFailedAt: AT,
    });
  });

  it('PUT and DELETE installment: the amount as decimal text, exactly, in minor units', async () => {
    answer('PUT', INSTALLMENT_PATH, installmentRecord({ grossAmount: '0.10' }));
    answer('DELETE', INSTALLMENT_PATH, installmentRecord({ grossAmount: 1.005, status: 'X' }));
    const client = makeClient();
    const updated = await client.installment(
      {
        action: 'update',
        paymentId: PAYMENT_ID,
        installmentId: INSTALLMENT_ID,
        input: { grossAmountMinor: 10 },
      },
      { currency: 'NOK' },
    );
    expect(updated.grossAmountMinor).toBe(10);
    // 1.005 NOK is no amount of øre: refused, never rounded.
    const error = await failure(
      client.installment(
        { action: 'delete', paymentId: PAYMENT_ID, installmentId: INSTALLMENT_ID },
        { currency: 'NOK' },
      ),
    );
    expect(error).toMatchObject({ code: 'PAYFLOW.BAD_RESPONSE' });
  });

  it('create payment: installment items with text amounts and epoch times', async () => {
    answer('POST', '/api/payments', {
      id: PAYMENT_ID,
      _links: { longGui: 'https://pay.example/p/a' },
      installments: [
        installmentRecord({ grossAmount: '1249.50', successfullyChargedAt: AT_MS }),
        installmentRecord({ id: 'c'.repeat(24), grossAmount: 0, successfullyChargedAt: null }),
      ],
      ...UNKNOWN_FIELDS,
    });
    const input: CreatePaymentInput = {
      customer: { type: 'person', firstName: 'Kari' },
      order: { orderNumber: 'SO-1', objects: [] },
      payment: {
        currency: 'NOK',
        totalGrossAmountMinor: 124_950,
        totalNetAmountMinor: 99_960,
        dueDate: '2026-12-01',
      },
    };
    const created = await makeClient().createPayment(input);
    expect(created.paymentLink).toBe('https://pay.example/p/a');
    expect(created.installments?.map((entry) => entry.grossAmountMinor)).toEqual([124_950, 0]);
    expect(created.installments?.[0]?.successfullyChargedAt).toBe(AT);
  });

  it('ping: expiresAt as epoch seconds', async () => {
    answer('GET', '/partner/auth/ping', {
      ok: true,
      clientId: 'client',
      scopes: [],
      expiresAt: AT_S,
      extra: { x: 1 },
    });
    await expect(makeClient().ping()).resolves.toMatchObject({ ok: true, expiresAt: AT });
  });

  it('upload: a sparse answer is completed from the upload; text size, epoch time', async () => {
    const client = makeClient();
    answer('POST', UPLOAD_PATH, { id: 'doc-1' });
    await expect(client.uploadDocument(document)).resolves.toMatchObject({
      id: 'doc-1',
      paymentId: PAYMENT_ID,
      fileName: document.fileName,
      contentType: 'application/pdf',
      size: DOCUMENT_BYTES.length,
      uploadedAt: null,
    });
    answer('POST', UPLOAD_PATH, { id: 7, size: '9', uploadedAt: String(AT_MS), extra: true });
    await expect(client.uploadDocument(document)).resolves.toMatchObject({
      id: '7',
      size: 9,
      uploadedAt: AT,
    });
  });
});

describe('a token answer without expires_in', () => {
  function tokenAnswer(extra: Record<string, unknown>): FakeHandler {
    let issued = 0;
    return (_request, res) => {
      issued += 1;
      sendJson(res, 200, {
        access_token: `token-${issued}`,
        token_type: 'bearer',
        ...extra,
      });
    };
  }

  it('is used for the documented default lifetime (300 s, refreshed 60 s early)', async () => {
    fake.routes.set(`POST ${TOKEN_PATH}`, tokenAnswer({ scope: 'a b', unknown: 1 }));
    answer('GET', STATUS_PATH, statusBody());
    let now = 1_000_000;
    const client = makeClient({ now: () => now });
    await client.getPaymentStatus(PAYMENT_ID);
    now += (DEFAULT_TOKEN_LIFETIME_SECONDS - 61) * 1000;
    await client.getPaymentStatus(PAYMENT_ID);
    expect(fake.count('POST', TOKEN_PATH)).toBe(1);
    now += 2000;
    await client.getPaymentStatus(PAYMENT_ID);
    expect(fake.count('POST', TOKEN_PATH)).toBe(2);
    const bearers = fake.requests
      .filter((request) => request.path === STATUS_PATH)
      .map((request) => request.headers.authorization);
    expect(bearers).toEqual(['Bearer token-1', 'Bearer token-1', 'Bearer token-2']);
    await expect(client.issueToken()).resolves.toMatchObject({
      expiresInSeconds: DEFAULT_TOKEN_LIFETIME_SECONDS,
      scopes: ['a', 'b'],
    });
  });

  it('null is the same as absent, and numeric text is read as seconds', async () => {
    fake.routes.set(`POST ${TOKEN_PATH}`, tokenAnswer({ expires_in: null }));
    const client = makeClient();
    await expect(client.issueToken()).resolves.toMatchObject({
      expiresInSeconds: DEFAULT_TOKEN_LIFETIME_SECONDS,
    });
    fake.routes.set(`POST ${TOKEN_PATH}`, tokenAnswer({ expires_in: '3600' }));
    await expect(client.issueToken()).resolves.toMatchObject({ expiresInSeconds: 3600 });
  });

  it('an early expiry costs one 401 and one refresh', async () => {
    fake.routes.set(`POST ${TOKEN_PATH}`, tokenAnswer({}));
    let statusCalls = 0;
    fake.routes.set(`GET ${STATUS_PATH}`, (_request, res) => {
      statusCalls += 1;
      if (statusCalls === 2) sendJson(res, 401, { code: 'token_expired', message: 'expired' });
      else sendJson(res, 200, statusBody());
    });
    const client = makeClient();
    await client.getPaymentStatus(PAYMENT_ID);
    await client.getPaymentStatus(PAYMENT_ID);
    expect(fake.count('POST', TOKEN_PATH)).toBe(2);
    expect(statusCalls).toBe(3);
  });
});

describe('uploadDocument as multipart/form-data', () => {
  const documentAnswer = { id: 'doc-1', paymentId: PAYMENT_ID, size: 9, uploadedAt: AT };

  it('sends paymentId and the file with its name, content type and exact bytes', async () => {
    answer('POST', UPLOAD_PATH, documentAnswer);
    const result = await makeClient({ documentUpload: 'multipart' }).uploadDocument(document);
    expect(result).toMatchObject({ id: 'doc-1', size: 9, fileName: document.fileName });
    const [request] = fake.requests.filter((entry) => entry.path === UPLOAD_PATH);
    expect(request?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(request?.headers['content-length']).toBe(String(request?.rawBody.length));
    const form = await formOf(request as FakeRequest);
    expect([...form.keys()]).toEqual(['paymentId', 'file']);
    expect(form.get('paymentId')).toBe(PAYMENT_ID);
    const file = form.get('file') as File;
    expect(file.name).toBe(document.fileName);
    expect(file.type).toBe('application/pdf');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(DOCUMENT_BYTES);
  });

  it('runs the send hook once before the multipart body leaves', async () => {
    answer('POST', UPLOAD_PATH, documentAnswer);
    let hookCalls = 0;
    const onSend = (): Promise<void> => {
      hookCalls += 1;
      expect(fake.count('POST', UPLOAD_PATH)).toBe(0);
      return Promise.resolve();
    };
    await makeClient({ documentUpload: 'multipart' }).uploadDocument(document, {
      signal: AbortSignal.timeout(5000),
      onSend,
    });
    expect(hookCalls).toBe(1);
    const [request] = fake.requests.filter((entry) => entry.path === UPLOAD_PATH);
    const file = (await formOf(request as FakeRequest)).get('file') as File;
    expect(Buffer.from(await file.arrayBuffer())).toEqual(DOCUMENT_BYTES);
  });

  it('refuses content that is not base64 before sending anything', async () => {
    answer('POST', UPLOAD_PATH, documentAnswer);
    const error = await failure(
      makeClient({ documentUpload: 'multipart' }).uploadDocument({
        ...document,
        contentBase64: 'not base64!',
      }),
    );
    expect(error).toMatchObject({ code: 'PAYFLOW.INVALID_REQUEST', reached: 'no' });
    expect(fake.count('POST', UPLOAD_PATH)).toBe(0);
  });

  it('JSON stays the default', async () => {
    answer('POST', UPLOAD_PATH, documentAnswer);
    await makeClient().uploadDocument(document);
    const [request] = fake.requests.filter((entry) => entry.path === UPLOAD_PATH);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual(document);
  });
});
