/**
 * PayflowClient over real HTTP against a scriptable fake (test/payflow/support/fake-payflow.ts),
 * for what needs exact control of the connection: the token request's wire format, connection
 * refused / reset / silence at known points (the `reached` classification), unusable 2xx
 * bodies, the rate-limit gate, a 100,000-row CSV streamed, logging hygiene, abort and close.
 * The same behaviours against the real sandbox are in client.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server as NetServer } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { PayflowClient } from '../../src/payflow/payflow.client.js';
import {
  PayflowError,
  PayflowValidationError,
  type PayflowReached,
} from '../../src/payflow/payflow.errors.js';
import type { PayflowCallEvent, PayflowClientOptions } from '../../src/payflow/payflow.types.js';
import { REDACTED_PATHS } from '../../src/logging/logger.js';
import type { PayflowCallContext } from '../../src/orders/engine/command-spec.js';
import {
  sendJson,
  startFakePayflow,
  tokenRoute,
  type FakePayflow,
} from './support/fake-payflow.js';
import { failure } from './support/failure.js';

const PAYMENT_ID = 'a'.repeat(24);
const STATUS_PATH = `/api/payments/${PAYMENT_ID}/paymentStatus`;
const SECRET = 'top:secret/with+chars';
const statusBody = {
  totalAmount: 1249.5,
  installments: [],
  paymentId: PAYMENT_ID,
  paymentNumber: 1000,
  paymentStatus: { paymentStatus: 'DRAFT' },
  merchantId: 'org-1',
  createdAt: '2026-11-21T10:00:00Z',
  dueDate: '2026-12-01',
  currency: 'NOK',
};
const pingBody = { ok: true, clientId: 'c', scopes: [], expiresAt: '2026-11-21T11:00:00Z' };

let fake: FakePayflow;
const clients: PayflowClient[] = [];

function makeClient(overrides: Partial<PayflowClientOptions> = {}): PayflowClient {
  const client = new PayflowClient({
    baseUrl: fake.url,
    partnerBaseUrl: `${fake.url}/partner`,
    clientId: 'client id&1',
    clientSecret: SECRET,
    requestTimeoutMs: 2000,
    retryBaseDelayMs: 10,
    retryMaxDelayMs: 50,
    ...overrides,
  });
  clients.push(client);
  return client;
}

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

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

beforeEach(async () => {
  fake = await startFakePayflow();
  fake.routes.set('POST /partner/auth/token', tokenRoute());
  fake.routes.set('GET /partner/auth/ping', (_r, res) => sendJson(res, 200, pingBody));
  fake.routes.set(`GET ${STATUS_PATH}`, (_r, res) => sendJson(res, 200, statusBody));
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await fake.close();
});

describe('token request and headers', () => {
  it('sends client credentials by HTTP Basic (form-encoded), a form body, and caches the token', async () => {
    const client = makeClient({ scopes: ['organization:payflow:read'] });
    await client.ping();
    await client.getPaymentStatus(PAYMENT_ID, { organizationId: 'org-1' });
    expect(fake.count('POST', '/partner/auth/token')).toBe(1);
    const [token, ping, status] = fake.requests;
    expect(token?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(token?.headers.authorization).toBe(
      `Basic ${Buffer.from('client+id%261:top%3Asecret%2Fwith%2Bchars').toString('base64')}`,
    );
    expect(new URLSearchParams(token?.body)).toEqual(
      new URLSearchParams({ grant_type: 'client_credentials', scope: 'organization:payflow:read' }),
    );
    expect(ping?.headers.authorization).toBe('Bearer token-1');
    expect(ping?.headers['x-organization-id']).toBeUndefined();
    expect(status?.headers['x-organization-id']).toBe('org-1');
    expect(status?.headers.accept).toBe('application/json');
    expect(status?.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('single flight: 50 concurrent callers cause one token request', async () => {
    fake.routes.set('POST /partner/auth/token', async (request, res, socket) => {
      await sleep(100);
      await tokenRoute()(request, res, socket);
    });
    const client = makeClient();
    const results = await Promise.all(Array.from({ length: 50 }, () => client.ping()));
    expect(results).toHaveLength(50);
    expect(fake.count('POST', '/partner/auth/token')).toBe(1);
    expect(fake.count('GET', '/partner/auth/ping')).toBe(50);
    expect(client.tokenFetchCount).toBe(1);
  });

  it('refreshes before expiry: 60 s early, or at half a short lifetime', async () => {
    fake.routes.set('POST /partner/auth/token', tokenRoute(10));
    let now = Date.parse('2026-11-21T10:00:00Z');
    const client = makeClient({ now: () => now });
    await client.ping();
    now += 4_999;
    await client.ping();
    expect(fake.count('POST', '/partner/auth/token')).toBe(1);
    now += 1;
    await Promise.all([client.ping(), client.ping(), client.ping()]);
    expect(fake.count('POST', '/partner/auth/token')).toBe(2);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer token-2');
  });

  it('a 401 refreshes the token once and repeats the call (even a POST)', async () => {
    let answered = 0;
    fake.routes.set(`POST /partner/payments/${PAYMENT_ID}/manual-paid`, (request, res) => {
      answered += 1;
      if (request.headers.authorization === 'Bearer token-1') {
        sendJson(res, 401, { code: 'token_expired', message: 'expired' });
      } else {
        sendJson(res, 200, { paymentId: PAYMENT_ID, paymentStatus: 'PAID' });
      }
    });
    const client = makeClient();
    await expect(client.markPaid(PAYMENT_ID, { note: 'cash' })).resolves.toMatchObject({
      paymentStatus: 'PAID',
    });
    expect(answered).toBe(2);
    expect(fake.count('POST', '/partner/auth/token')).toBe(2);
  });

  it('a second 401 is final: PAYFLOW.UNAUTHORIZED', async () => {
    fake.routes.set('GET /partner/auth/ping', (_r, res) =>
      sendJson(res, 401, { code: 'unauthorized', message: 'no' }),
    );
    const error = await failure(makeClient().ping());
    expectFailure(error, 'PAYFLOW.UNAUTHORIZED', 'yes', false);
    expect(error.payflowCode).toBe('unauthorized');
    expect(fake.count('GET', '/partner/auth/ping')).toBe(2);
    expect(fake.count('POST', '/partner/auth/token')).toBe(2);
  });

  it('a refused token request fails the call as unsent (stage token), transient for the event, without retrying it', async () => {
    fake.routes.set('POST /partner/auth/token', (_r, res) =>
      sendJson(res, 401, { error: 'invalid_client' }),
    );
    const error = await failure(makeClient().markPaid(PAYMENT_ID));
    // Our own credentials refused: the event waits for an operator (or a rotated secret
    // file) instead of being dead-lettered as rejected.
    expectFailure(error, 'PAYFLOW.UNAUTHORIZED', 'no', true);
    expect(error.deadLetterReason).toBeUndefined();
    expect(error).toMatchObject({
      endpoint: 'markPaid',
      stage: 'token',
      payflowCode: 'invalid_client',
    });
    expect(error.mayHaveTakenEffect).toBe(false);
    expect(fake.count('POST', '/partner/auth/token')).toBe(1);
    expect(JSON.stringify(error.toJSON())).not.toContain('secret');
  });

  it('a token endpoint 5xx is retried (the token request is idempotent)', async () => {
    let calls = 0;
    fake.routes.set('POST /partner/auth/token', async (request, res, socket) => {
      calls += 1;
      if (calls < 3) sendJson(res, 503, { code: 'unavailable', message: 'later' });
      else await tokenRoute()(request, res, socket);
    });
    await expect(makeClient().ping()).resolves.toMatchObject({ ok: true });
    expect(calls).toBe(3);
  });
});

describe('reached: whether the request may have arrived', () => {
  it('connection refused: NETWORK, reached no; a GET is retried, a POST is not', async () => {
    const port = await closedPort();
    const events: PayflowCallEvent[] = [];
    const client = makeClient({
      baseUrl: `http://127.0.0.1:${port}`,
      onCall: (e) => events.push(e),
    });
    const post = await failure(
      client.refund({
        paymentId: PAYMENT_ID,
        currency: 'NOK',
        totalGrossAmountMinor: 100,
        totalNetAmountMinor: 80,
      }),
    );
    expectFailure(post, 'PAYFLOW.NETWORK', 'no', true);
    expect(post.metadata).toMatchObject({ networkCode: 'ECONNREFUSED', endpoint: 'refund' });
    expect(events.filter((e) => e.endpoint === 'refund')).toHaveLength(1);
    const get = await failure(client.getPaymentStatus(PAYMENT_ID));
    expectFailure(get, 'PAYFLOW.NETWORK', 'no', true);
    expect(get.attempt).toBe(3);
    expect(events.filter((e) => e.endpoint === 'getPaymentStatus').map((e) => e.attempt)).toEqual([
      1, 2, 3,
    ]);
  });

  it('connection reset after the request arrived: NETWORK, reached maybe, POST not retried', async () => {
    fake.routes.set('POST /api/payments/uploadDocument', (_r, _res, socket) => {
      socket.destroy();
    });
    const error = await failure(
      makeClient().uploadDocument({
        paymentId: PAYMENT_ID,
        fileName: 'a.pdf',
        contentType: 'application/pdf',
        contentBase64: 'JVBERi0=',
      }),
    );
    expectFailure(error, 'PAYFLOW.NETWORK', 'maybe', true);
    expect(error.mayHaveTakenEffect).toBe(true);
    expect(fake.count('POST', '/api/payments/uploadDocument')).toBe(1);
  });

  it('reset on a GET is retried until it works', async () => {
    let calls = 0;
    fake.routes.set(`GET ${STATUS_PATH}`, (_r, res, socket) => {
      calls += 1;
      if (calls < 3) socket.destroy();
      else sendJson(res, 200, statusBody);
    });
    await expect(makeClient().getPaymentStatus(PAYMENT_ID)).resolves.toMatchObject({
      totalAmountMinor: 124_950,
    });
    expect(calls).toBe(3);
  });

  it('no answer within the time-out: TIMEOUT, reached maybe, POST not retried', async () => {
    fake.routes.set(`POST /api/payments/${PAYMENT_ID}/installments/create`, () => undefined);
    const started = Date.now();
    const error = await failure(
      makeClient({ requestTimeoutMs: 300 }).installment(
        {
          action: 'create',
          paymentId: PAYMENT_ID,
          input: { date: '2027-01-01', grossAmountMinor: 100 },
        },
        { currency: 'NOK' },
      ),
    );
    expectFailure(error, 'PAYFLOW.TIMEOUT', 'maybe', true);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(fake.count('POST', `/api/payments/${PAYMENT_ID}/installments/create`)).toBe(1);
  });

  it('invalid input is refused before sending: INVALID_REQUEST, reached no', async () => {
    const client = makeClient();
    const error = await failure(
      client.refund({
        paymentId: PAYMENT_ID,
        currency: 'NOK',
        totalGrossAmountMinor: 1.5,
        totalNetAmountMinor: 1,
      }),
    );
    expectFailure(error, 'PAYFLOW.INVALID_REQUEST', 'no', false);
    expect(error.message).toContain('totalGrossAmount');
    const badDate = await failure(
      client.installment(
        {
          action: 'create',
          paymentId: PAYMENT_ID,
          input: { date: '1.1.2027', grossAmountMinor: 1 },
        },
        { currency: 'NOK' },
      ),
    );
    expect(badDate.code).toBe('PAYFLOW.INVALID_REQUEST');
    expect(fake.requests).toHaveLength(0);
  });
});

/** A TCP server that counts connections and bytes and answers each request with a 503. */
async function countingServer(): Promise<{
  server: NetServer;
  url: string;
  connections: () => number;
  bytes: () => number;
}> {
  let connections = 0;
  let bytes = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (chunk.includes('\r\n\r\n{')) {
        socket.end('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    bytes: () => bytes,
  };
}

describe('the send hook ("about to leave")', () => {
  const refundInput = {
    paymentId: PAYMENT_ID,
    currency: 'NOK',
    totalGrossAmountMinor: 100,
    totalNetAmountMinor: 80,
  };

  it('runs once the connection is open and before any byte of the request is written', async () => {
    const counting = await countingServer();
    try {
      const client = makeClient({ baseUrl: counting.url, partnerBaseUrl: `${fake.url}/partner` });
      const seen: { connections: number; bytes: number }[] = [];
      const onSend = async (): Promise<void> => {
        await sleep(50);
        seen.push({ connections: counting.connections(), bytes: counting.bytes() });
      };
      const error = await failure(
        client.refund(refundInput, { signal: AbortSignal.timeout(5000), onSend }),
      );
      expect(seen).toEqual([{ connections: 1, bytes: 0 }]);
      expect(counting.bytes()).toBeGreaterThan(0);
      expectFailure(error, 'PAYFLOW.SERVER_ERROR', 'yes', true);
    } finally {
      counting.server.close();
    }
  });

  it('travels in the options: a handler that derives its own signal still runs it before a byte leaves', async () => {
    const counting = await countingServer();
    try {
      const client = makeClient({ baseUrl: counting.url, partnerBaseUrl: `${fake.url}/partner` });
      // A handler as the command runner calls it, narrowing the runner's deadline.
      const handler = (context: PayflowCallContext): Promise<unknown> => {
        const signal = AbortSignal.any([context.signal, AbortSignal.timeout(4000)]);
        return client.refund(refundInput, { ...context, signal });
      };
      const seen: { connections: number; bytes: number }[] = [];
      const error = await failure(
        handler({
          signal: AbortSignal.timeout(5000),
          onSend: async () => {
            await sleep(50);
            seen.push({ connections: counting.connections(), bytes: counting.bytes() });
          },
        }),
      );
      expect(seen).toEqual([{ connections: 1, bytes: 0 }]);
      expect(counting.bytes()).toBeGreaterThan(0);
      expectFailure(error, 'PAYFLOW.SERVER_ERROR', 'yes', true);
    } finally {
      counting.server.close();
    }
  });

  it('a request without a body, on a derived signal: the hook runs before Payflow sees it, a failing one sends nothing', async () => {
    const cancelPath = `/api/payments/${PAYMENT_ID}`;
    fake.routes.set(`DELETE ${cancelPath}`, (_r, res) => sendJson(res, 200, statusBody));
    const client = makeClient();
    const cancel = (context: PayflowCallContext): Promise<unknown> =>
      client.cancelPayment(PAYMENT_ID, {
        ...context,
        signal: AbortSignal.any([context.signal, AbortSignal.timeout(4000)]),
      });
    const seenByHook: number[] = [];
    await cancel({
      signal: AbortSignal.timeout(5000),
      onSend: () => {
        seenByHook.push(fake.count('DELETE', cancelPath));
        return Promise.resolve();
      },
    });
    expect({ seenByHook, after: fake.count('DELETE', cancelPath) }).toEqual({
      seenByHook: [0],
      after: 1,
    });

    const refused = await failure(
      cancel({
        signal: AbortSignal.timeout(5000),
        onSend: () => Promise.reject(new Error('lease lost')),
      }),
    );
    expectFailure(refused, 'PAYFLOW.ABORTED', 'no', true);
    expect(fake.count('DELETE', cancelPath)).toBe(1);
  });

  it('a deadline that passes while the hook runs: TIMEOUT, reached no, not a byte written', async () => {
    const counting = await countingServer();
    try {
      const client = makeClient({
        baseUrl: counting.url,
        partnerBaseUrl: `${fake.url}/partner`,
        requestTimeoutMs: 200,
      });
      const error = await failure(
        client.refund(refundInput, {
          signal: AbortSignal.timeout(5000),
          onSend: () => sleep(600),
        }),
      );
      expect({ code: error.code, reached: error.reached }).toEqual({
        code: 'PAYFLOW.TIMEOUT',
        reached: 'no',
      });
      expect(error.mayHaveTakenEffect).toBe(false);
      await sleep(600);
      expect(counting.bytes()).toBe(0);
    } finally {
      counting.server.close();
    }
  });

  it('a caller abort during the hook, even one that lets the hook finish: reached no, nothing written', async () => {
    const counting = await countingServer();
    try {
      const client = makeClient({ baseUrl: counting.url, partnerBaseUrl: `${fake.url}/partner` });
      const caller = new AbortController();
      const onSend = (): Promise<void> => {
        caller.abort();
        return Promise.resolve();
      };
      const error = await failure(client.refund(refundInput, { signal: caller.signal, onSend }));
      expect({ code: error.code, reached: error.reached }).toEqual({
        code: 'PAYFLOW.ABORTED',
        reached: 'no',
      });
      await sleep(100);
      expect(counting.bytes()).toBe(0);
    } finally {
      counting.server.close();
    }
  });

  it('a failing hook sends nothing: ABORTED, reached no, not a byte written', async () => {
    const counting = await countingServer();
    try {
      const client = makeClient({ baseUrl: counting.url, partnerBaseUrl: `${fake.url}/partner` });
      let hookCalls = 0;
      const onSend = (): Promise<void> => {
        hookCalls += 1;
        return Promise.reject(new Error('lease lost'));
      };
      const error = await failure(
        client.refund(refundInput, { signal: AbortSignal.timeout(5000), onSend }),
      );
      expectFailure(error, 'PAYFLOW.ABORTED', 'no', true);
      expect(error.mayHaveTakenEffect).toBe(false);
      await sleep(50);
      // undici may open a spare connection after destroying the first; neither carries a byte.
      expect(counting.connections()).toBeGreaterThanOrEqual(1);
      expect({ hookCalls, bytes: counting.bytes() }).toEqual({ hookCalls: 1, bytes: 0 });
    } finally {
      counting.server.close();
    }
  });
});

describe('unusable answers', () => {
  it('a 2xx that is not JSON, or does not match the schema, is BAD_RESPONSE and not retried', async () => {
    fake.routes.set(`GET ${STATUS_PATH}`, (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>maintenance</html>');
    });
    const client = makeClient();
    const notJson = await failure(client.getPaymentStatus(PAYMENT_ID));
    expectFailure(notJson, 'PAYFLOW.BAD_RESPONSE', 'yes', false);
    expect(fake.count('GET', STATUS_PATH)).toBe(1);

    fake.routes.set(`GET ${STATUS_PATH}`, (_r, res) =>
      sendJson(res, 200, { ...statusBody, paymentNumber: 'one' }),
    );
    const mismatch = await failure(client.getPaymentStatus(PAYMENT_ID));
    expect(mismatch.code).toBe('PAYFLOW.BAD_RESPONSE');
    expect(mismatch.message).toContain('paymentNumber');

    fake.routes.set(`GET ${STATUS_PATH}`, (_r, res) =>
      sendJson(res, 200, { ...statusBody, totalAmount: 1.005 }),
    );
    const decimals = await failure(client.getPaymentStatus(PAYMENT_ID));
    expect(decimals.code).toBe('PAYFLOW.BAD_RESPONSE');
    expect(decimals.message).toContain('totalAmount is not an exact amount of NOK');
  });

  it('unknown fields are tolerated and kept in raw', async () => {
    fake.routes.set(`GET ${STATUS_PATH}`, (_r, res) =>
      sendJson(res, 200, { ...statusBody, newField: [1, 2] }),
    );
    const status = await makeClient().getPaymentStatus(PAYMENT_ID);
    expect(status.raw).toMatchObject({ newField: [1, 2] });
  });

  it('422 surfaces detail[] and is permanent', async () => {
    fake.routes.set('POST /api/refund', (_r, res) =>
      sendJson(res, 422, {
        detail: [
          {
            loc: ['body', 'totalGrossAmount'],
            msg: 'too much',
            type: 'business.refund_exceeds_remaining',
          },
        ],
      }),
    );
    const error = await failure(
      makeClient().refund({
        paymentId: PAYMENT_ID,
        currency: 'NOK',
        totalGrossAmountMinor: 100,
        totalNetAmountMinor: 80,
      }),
    );
    expect(error).toBeInstanceOf(PayflowValidationError);
    expectFailure(error, 'PAYFLOW.VALIDATION', 'yes', false);
    expect((error as PayflowValidationError).detail[0]?.type).toBe(
      'business.refund_exceeds_remaining',
    );
  });
});

describe('5xx, 429 and the rate-limit gate', () => {
  it('a GET is retried on 503 with back-off, honouring Retry-After', async () => {
    let calls = 0;
    const at: number[] = [];
    fake.routes.set(`GET ${STATUS_PATH}`, (_r, res) => {
      calls += 1;
      at.push(Date.now());
      if (calls === 1)
        sendJson(res, 503, { code: 'unavailable', message: 'x' }, { 'retry-after': '1' });
      else sendJson(res, 200, statusBody);
    });
    await makeClient().getPaymentStatus(PAYMENT_ID);
    expect(calls).toBe(2);
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('gives up after maxAttempts with the last error', async () => {
    fake.routes.set(`GET ${STATUS_PATH}`, (_r, res) =>
      sendJson(res, 500, { code: 'boom', message: 'x' }),
    );
    const error = await failure(makeClient({ maxAttempts: 4 }).getPaymentStatus(PAYMENT_ID));
    expectFailure(error, 'PAYFLOW.SERVER_ERROR', 'yes', true);
    expect(error.attempt).toBe(4);
    expect(error.payflowCode).toBe('boom');
    expect(fake.count('GET', STATUS_PATH)).toBe(4);
  });

  it("a 429's Retry-After holds every later call of the client (POST fails, GET waits)", async () => {
    let limited = true;
    fake.routes.set('POST /partner/payment-methods/resend', (_r, res) => {
      if (limited) {
        limited = false;
        sendJson(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': '1' });
      } else {
        sendJson(res, 200, {
          paymentId: PAYMENT_ID,
          paymentMethodId: '0'.repeat(24),
          status: 'accepted',
        });
      }
    });
    const client = makeClient();
    await client.ping();
    const error = await failure(
      client.resendPayment({ paymentId: PAYMENT_ID, paymentMethodId: '0'.repeat(24) }),
    );
    expectFailure(error, 'PAYFLOW.RATE_LIMITED', 'yes', true);
    expect(error.retryAfterMs).toBe(1000);
    const limitedAt = Date.now();
    await client.ping();
    const pings = fake.requests.filter((r) => r.path === '/partner/auth/ping');
    expect(pings).toHaveLength(2);
    expect(Date.now() - limitedAt).toBeGreaterThanOrEqual(950);
  });

  it('caps the gate, and does not wait inside a call for a Retry-After beyond the cap', async () => {
    let calls = 0;
    fake.routes.set(`GET ${STATUS_PATH}`, (_r, res) => {
      calls += 1;
      if (calls === 1)
        sendJson(res, 429, { code: 'rate_limited', message: 'x' }, { 'retry-after': '3600' });
      else sendJson(res, 200, statusBody);
    });
    const client = makeClient({ maxRetryAfterMs: 300 });
    const error = await failure(client.getPaymentStatus(PAYMENT_ID));
    expect(error).toMatchObject({
      code: 'PAYFLOW.RATE_LIMITED',
      retryAfterMs: 3_600_000,
      attempt: 1,
    });
    const started = Date.now();
    await client.getPaymentStatus(PAYMENT_ID);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(200);
    expect(waited).toBeLessThan(2000);
  });
});

describe('settlement CSV', () => {
  it('streams a 100,000-row file: the call resolves before the server has finished writing', async () => {
    const rows = 100_000;
    let finished = false;
    fake.routes.set('GET /partner/settlements/generate_csv', async (request, res) => {
      expect(request.query.get('from')).toBe('2026-11-01');
      expect(request.query.get('format')).toBe('standard');
      res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' });
      res.write('settlement_id,settlement_date,gross_amount\r\n');
      await sleep(200);
      for (let i = 0; i < rows; i++) {
        const line = `s${i},2026-11-21,${(i % 1000) + 0.5}\r\n`;
        if (!res.write(line)) await new Promise((resolve) => res.once('drain', resolve));
      }
      finished = true;
      res.end();
    });
    const csv = await makeClient().generateSettlementCsv({ from: '2026-11-01', to: '2026-11-30' });
    expect(finished).toBe(false);
    expect(csv.contentType).toBe('text/csv; charset=utf-8');
    let lines = 0;
    let rest = '';
    for await (const chunk of csv.body) {
      const text = rest + (chunk as Buffer).toString('utf8');
      const parts = text.split('\r\n');
      rest = parts.pop() ?? '';
      lines += parts.length;
    }
    expect(lines).toBe(rows + 1);
    expect(finished).toBe(true);
  });

  it('text() reads a small file; a non-CSV answer is BAD_RESPONSE', async () => {
    fake.routes.set('GET /partner/settlements/generate_csv', (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end('a,b\r\n1,2\r\n');
    });
    const client = makeClient();
    await expect(
      client.generateSettlementCsvText({ from: '2026-11-01', to: '2026-11-01' }),
    ).resolves.toBe('a,b\r\n1,2\r\n');
    fake.routes.set('GET /partner/settlements/generate_csv', (_r, res) => sendJson(res, 200, {}));
    const error = await failure(
      client.generateSettlementCsv({ from: '2026-11-01', to: '2026-11-01' }),
    );
    expect(error.code).toBe('PAYFLOW.BAD_RESPONSE');
    const range = await failure(
      client.generateSettlementCsv({ from: '2026-12-01', to: '2026-11-01' }),
    );
    expect(range.code).toBe('PAYFLOW.INVALID_REQUEST');
  });
});

describe('logging, hooks, abort and close', () => {
  it('logs one debug line per exchange, with no secret, token or personal data', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = pino({ level: 'debug', redact: { paths: REDACTED_PATHS } }, sink);
    fake.routes.set('POST /api/payments', (_r, res) =>
      sendJson(res, 422, {
        detail: [
          {
            loc: ['body', 'customer', 'email'],
            msg: 'bad',
            type: 'value_error',
            input: 'kari@example.com',
          },
        ],
      }),
    );
    const client = new PayflowClient(
      {
        baseUrl: fake.url,
        partnerBaseUrl: `${fake.url}/partner`,
        clientId: 'id',
        clientSecret: SECRET,
      },
      logger,
    );
    clients.push(client);
    const error = await failure(
      client.createPayment({
        customer: { email: 'kari@example.com', phone: { countryCode: '+47', number: '41234567' } },
        order: { orderNumber: 'SO-1', objects: [] },
        payment: {
          currency: 'NOK',
          totalGrossAmountMinor: 100,
          totalNetAmountMinor: 80,
          dueDate: '2026-12-01',
        },
      }),
    );
    logger.flush();
    const all = lines.join('\n') + JSON.stringify(error.toJSON()) + error.message;
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries.filter((e) => e.msg === 'payflow call')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ level: 20, endpoint: 'token', method: 'POST', status: 200 }),
        expect.objectContaining({
          level: 20,
          endpoint: 'createPayment',
          status: 422,
          outcome: 'PAYFLOW.VALIDATION',
        }),
      ]),
    );
    expect(entries.every((e) => (e.level as number) <= 20)).toBe(true);
    for (const forbidden of [
      SECRET,
      'token-1',
      'kari@example.com',
      '41234567',
      'Basic ',
      'Bearer ',
    ]) {
      expect(all).not.toContain(forbidden);
    }
  });

  it('reports every exchange to onCall, and a throwing hook does not break the call', async () => {
    const events: PayflowCallEvent[] = [];
    const client = makeClient({
      onCall: (event) => {
        events.push(event);
        throw new Error('metrics down');
      },
    });
    await client.ping();
    expect(events.map((e) => [e.endpoint, e.method, e.status, e.attempt, e.outcome])).toEqual([
      ['token', 'POST', 200, 1, 'ok'],
      ['ping', 'GET', 200, 1, 'ok'],
    ]);
    expect(events[1]?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("the caller's signal aborts a call: ABORTED", async () => {
    fake.routes.set('GET /partner/auth/ping', () => undefined);
    const client = makeClient();
    await client.listOrganizations().catch(() => undefined); // warm the token
    const controller = new AbortController();
    const pending = client.ping({ signal: controller.signal });
    await sleep(100);
    controller.abort();
    const error = await failure(pending);
    expectFailure(error, 'PAYFLOW.ABORTED', 'maybe', true);
    const before = await failure(client.ping({ signal: AbortSignal.abort() }));
    expectFailure(before, 'PAYFLOW.ABORTED', 'no', true);
  });

  it('close() ends waits, refuses new calls (reached no) and releases the pool', async () => {
    fake.routes.set(`GET ${STATUS_PATH}`, (_r, res) =>
      sendJson(res, 429, { code: 'rate_limited', message: 'x' }, { 'retry-after': '30' }),
    );
    const client = makeClient({ maxAttempts: 1 });
    await failure(client.getPaymentStatus(PAYMENT_ID));
    const waiting = failure(client.ping());
    await sleep(50);
    await client.close();
    const error = await waiting;
    expectFailure(error, 'PAYFLOW.ABORTED', 'no', true);
    expectFailure(await failure(client.ping()), 'PAYFLOW.ABORTED', 'no', true);
  });
});
