import { describe, expect, it } from '@jest/globals';
import {
  PayflowAbortedError,
  PayflowBadResponseError,
  PayflowClientError,
  PayflowError,
  PayflowForbiddenError,
  PayflowNetworkError,
  PayflowNotFoundError,
  PayflowRateLimitedError,
  PayflowServerError,
  PayflowTimeoutError,
  PayflowUnauthorizedError,
  PayflowValidationError,
} from './payflow.errors.js';
import {
  errorCodeOf,
  errorForStatus,
  errorForTransport,
  parseRetryAfter,
  validationDetailOf,
  type TransportContext,
} from './http/payflow.error-mapping.js';
import { AppError } from '../errors/app-error.js';

const base = { endpoint: 'createPayment', method: 'POST' } as const;

function status(code: number, body?: unknown, retryAfterMs?: number): PayflowError {
  return errorForStatus({ ...base, status: code, body, retryAfterMs });
}

function systemError(code: string): Error {
  return Object.assign(new Error(`${code} 127.0.0.1:1`), { code });
}

function transport(error: unknown, context: Partial<TransportContext> = {}): PayflowError {
  return errorForTransport(error, {
    ...base,
    requestSent: true,
    status: undefined,
    abortedBy: undefined,
    ...context,
  });
}

describe('errorForStatus', () => {
  it.each<[number, new (...args: never[]) => PayflowError, string, boolean, boolean]>([
    [400, PayflowClientError, 'PAYFLOW.CLIENT_ERROR', false, false],
    [401, PayflowUnauthorizedError, 'PAYFLOW.UNAUTHORIZED', false, false],
    [403, PayflowForbiddenError, 'PAYFLOW.FORBIDDEN', false, false],
    [404, PayflowNotFoundError, 'PAYFLOW.NOT_FOUND', false, false],
    [408, PayflowTimeoutError, 'PAYFLOW.TIMEOUT', true, false],
    [409, PayflowClientError, 'PAYFLOW.CLIENT_ERROR', false, false],
    [413, PayflowClientError, 'PAYFLOW.CLIENT_ERROR', false, false],
    [422, PayflowValidationError, 'PAYFLOW.VALIDATION', false, false],
    [429, PayflowRateLimitedError, 'PAYFLOW.RATE_LIMITED', true, false],
    [500, PayflowServerError, 'PAYFLOW.SERVER_ERROR', true, true],
    [502, PayflowServerError, 'PAYFLOW.SERVER_ERROR', true, true],
    [503, PayflowServerError, 'PAYFLOW.SERVER_ERROR', true, false],
    [504, PayflowServerError, 'PAYFLOW.SERVER_ERROR', true, true],
    [302, PayflowBadResponseError, 'PAYFLOW.BAD_RESPONSE', false, true],
  ])('%d → %p %s transient=%p mayHaveTakenEffect=%p', (code, type, name, transient, effect) => {
    const error = status(code);
    expect(error).toBeInstanceOf(type);
    expect(error).toBeInstanceOf(PayflowError);
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe(name);
    expect(error.transient).toBe(transient);
    expect(error.reached).toBe('yes');
    expect(error.status).toBe(code);
    expect(error.endpoint).toBe('createPayment');
    expect(error.mayHaveTakenEffect).toBe(effect);
    expect(error.metadata).toMatchObject({
      endpoint: 'createPayment',
      status: code,
      reached: 'yes',
    });
  });

  it('422 surfaces detail[] (loc, msg, type only) and says whether it is a business rule', () => {
    const error = status(422, {
      detail: [
        {
          loc: ['body', 'payment', 'totalGrossAmount'],
          msg: 'exceeds what can be refunded',
          type: 'business.refund_exceeds_remaining',
          input: 'kari@example.com',
        },
        { loc: ['body', 'customer', 'email'], msg: 'not an email', type: 'value_error.email' },
      ],
    });
    expect(error).toBeInstanceOf(PayflowValidationError);
    const validation = error as PayflowValidationError;
    expect(validation.detail).toEqual([
      {
        loc: ['body', 'payment', 'totalGrossAmount'],
        msg: 'exceeds what can be refunded',
        type: 'business.refund_exceeds_remaining',
      },
      { loc: ['body', 'customer', 'email'], msg: 'not an email', type: 'value_error.email' },
    ]);
    expect(validation.isBusinessRule).toBe(true);
    expect(validation.message).toBe(
      'Payflow rejected createPayment (422): body.payment.totalGrossAmount business.refund_exceeds_remaining; body.customer.email value_error.email',
    );
    expect(JSON.stringify(validation.toJSON())).not.toContain('kari@example.com');
    expect(validation.metadata).toMatchObject({ detailCount: 2 });
  });

  it('422 without a usable body has an empty detail', () => {
    expect((status(422, 'nonsense') as PayflowValidationError).detail).toEqual([]);
    expect(validationDetailOf({ detail: [{ loc: 'x' }] })).toEqual([]);
  });

  it("keeps Payflow's error code (error body or OAuth error) and Retry-After", () => {
    expect(status(403, { code: 'insufficient_scope', message: 'm' }).payflowCode).toBe(
      'insufficient_scope',
    );
    expect(status(401, { error: 'invalid_client' }).payflowCode).toBe('invalid_client');
    const limited = status(429, { code: 'rate_limited', message: 'slow down' }, 2000);
    expect(limited.retryAfterMs).toBe(2000);
    expect(limited.message).toContain('retry after 2000 ms');
  });
});

describe('errorForTransport', () => {
  it.each(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH'])(
    '%s: nothing reached Payflow, even if undici got as far as writing',
    (code) => {
      const error = transport(systemError(code), { requestSent: true });
      expect(error).toBeInstanceOf(PayflowNetworkError);
      expect(error.code).toBe('PAYFLOW.NETWORK');
      expect(error.transient).toBe(true);
      expect(error.reached).toBe('no');
      expect(error.mayHaveTakenEffect).toBe(false);
      expect((error as PayflowNetworkError).networkCode).toBe(code);
    },
  );

  it('connect time-out: TIMEOUT, not reached', () => {
    const error = transport(systemError('UND_ERR_CONNECT_TIMEOUT'), { requestSent: false });
    expect(error).toBeInstanceOf(PayflowTimeoutError);
    expect((error as PayflowTimeoutError).phase).toBe('connect');
    expect(error.reached).toBe('no');
  });

  it('a reset after the request was written: maybe; before: no', () => {
    const sent = transport(systemError('UND_ERR_SOCKET'), { requestSent: true });
    expect(sent).toBeInstanceOf(PayflowNetworkError);
    expect(sent.reached).toBe('maybe');
    expect(sent.mayHaveTakenEffect).toBe(true);
    expect(transport(systemError('ECONNRESET'), { requestSent: false }).reached).toBe('no');
  });

  it('headers time-out after sending: maybe; body time-out after the status: yes', () => {
    const headers = transport(systemError('UND_ERR_HEADERS_TIMEOUT'));
    expect(headers).toBeInstanceOf(PayflowTimeoutError);
    expect((headers as PayflowTimeoutError).phase).toBe('headers');
    expect(headers.reached).toBe('maybe');
    const body = transport(systemError('UND_ERR_BODY_TIMEOUT'), { status: 200 });
    expect((body as PayflowTimeoutError).phase).toBe('body');
    expect(body.reached).toBe('yes');
    expect(body.mayHaveTakenEffect).toBe(true);
  });

  it('our own deadline is a TIMEOUT; a caller abort or close is ABORTED', () => {
    const deadline = transport(new Error('deadline'), { abortedBy: 'deadline' });
    expect(deadline).toBeInstanceOf(PayflowTimeoutError);
    expect((deadline as PayflowTimeoutError).phase).toBe('deadline');
    expect(deadline.reached).toBe('maybe');
    const caller = transport(new Error('stop'), { abortedBy: 'caller', requestSent: false });
    expect(caller).toBeInstanceOf(PayflowAbortedError);
    expect(caller.reached).toBe('no');
    expect(caller.transient).toBe(true);
    expect(transport(systemError('UND_ERR_DESTROYED'))).toBeInstanceOf(PayflowAbortedError);
  });

  it('a pool destroyed or closed under a request: maybe once its head was written, else no', () => {
    // undici fails the request it is writing with the pool's ClientDestroyedError too (a
    // close that outlived its grace period): that request may have reached Payflow.
    for (const code of ['UND_ERR_DESTROYED', 'UND_ERR_CLOSED']) {
      expect(transport(systemError(code), { requestSent: true }).reached).toBe('maybe');
      expect(transport(systemError(code), { requestSent: false }).reached).toBe('no');
    }
  });

  it('unknown failures after sending are NETWORK maybe; the cause is kept', () => {
    const cause = new TypeError('weird');
    const error = transport(cause);
    expect(error).toBeInstanceOf(PayflowNetworkError);
    expect(error.reached).toBe('maybe');
    expect(error.cause).toBe(cause);
  });

  it('finds codes wrapped in causes', () => {
    expect(errorCodeOf(new Error('fetch failed', { cause: systemError('ECONNREFUSED') }))).toBe(
      'ECONNREFUSED',
    );
    expect(errorCodeOf('string')).toBeUndefined();
  });
});

describe('withContext', () => {
  it('re-attributes a token failure to the call, unsent', () => {
    const tokenFailure = errorForStatus({
      endpoint: 'token',
      method: 'POST',
      status: 503,
      body: undefined,
      retryAfterMs: undefined,
    });
    const error = tokenFailure.withContext({
      endpoint: 'createPayment',
      method: 'POST',
      reached: 'no',
      status: 503,
      stage: 'token',
      cause: tokenFailure,
    });
    expect(error).toBeInstanceOf(PayflowServerError);
    expect(error).toMatchObject({ endpoint: 'createPayment', reached: 'no', stage: 'token' });
    expect(error.mayHaveTakenEffect).toBe(false);
    expect(error.cause).toBe(tokenFailure);
  });

  it('our own credentials refused at the token endpoint are transient for the event; a 401 on the call is not', () => {
    const refused = errorForStatus({
      endpoint: 'token',
      method: 'POST',
      status: 401,
      body: { error: 'invalid_client' },
      retryAfterMs: undefined,
    });
    const onTheCall = refused.withContext({
      endpoint: 'createPayment',
      method: 'POST',
      reached: 'no',
      status: 401,
      payflowCode: 'invalid_client',
      stage: 'token',
      cause: refused,
    });
    expect(onTheCall).toMatchObject({ code: 'PAYFLOW.UNAUTHORIZED', transient: true });
    expect(onTheCall.deadLetterReason).toBeUndefined();
    const requestRefused = errorForStatus({
      endpoint: 'createPayment',
      method: 'POST',
      status: 401,
      body: { code: 'unauthorized' },
      retryAfterMs: undefined,
    });
    expect(requestRefused).toMatchObject({
      transient: false,
      deadLetterReason: 'rejected_by_payflow',
    });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T10:00:00Z');
  it.each<[string | string[] | undefined, number | undefined]>([
    ['2', 2000],
    ['0', 0],
    [' 120 ', 120_000],
    ['1.5', 1500],
    [['3', '4'], 3000],
    ['Sat, 21 Nov 2026 10:00:05 GMT', 5000],
    ['Sat, 21 Nov 2026 09:00:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
    ['-1', undefined],
  ])('%p → %p', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});
