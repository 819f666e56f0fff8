/**
 * Every failure of a Payflow call, as a typed error with a stable `code`.
 *
 * - `transient`: whether the same call may succeed later (network, time-out, 408, 429, 5xx).
 * - `reached`: whether the request may have reached Payflow, for the caller's retry decision
 *   on non-idempotent calls: `no` (nothing was sent: connect/DNS failure, refused, invalid
 *   input, a failed token request before it), `maybe` (sent, then reset or timed out before
 *   an answer), `yes` (an HTTP answer came).
 * - `mayHaveTakenEffect`: `reached` combined with the status: an answered 4xx (or 429/408)
 *   took no effect, a 5xx or a broken 2xx may have.
 *
 * Messages and metadata carry endpoint names, statuses and Payflow's error codes only: never
 * request bodies, tokens, secrets, emails or phone numbers.
 */
import type { ZodError } from 'zod';
import { AppError, type ErrorMetadata } from '../common/app-error.js';
import {
  errorBodySchema,
  oauthErrorSchema,
  validationErrorSchema,
  type ValidationDetail,
} from './payflow.schemas.js';
import type { PayflowEndpointName } from './payflow.types.js';

export type PayflowReached = 'no' | 'maybe' | 'yes';
/** `token`: the failure was the token request made for this call (so the call itself was not sent). */
export type PayflowStage = 'token' | 'request';

export type PayflowErrorCode =
  | 'PAYFLOW.VALIDATION'
  | 'PAYFLOW.RATE_LIMITED'
  | 'PAYFLOW.SERVER_ERROR'
  | 'PAYFLOW.NETWORK'
  | 'PAYFLOW.TIMEOUT'
  | 'PAYFLOW.UNAUTHORIZED'
  | 'PAYFLOW.FORBIDDEN'
  | 'PAYFLOW.NOT_FOUND'
  | 'PAYFLOW.BAD_RESPONSE'
  | 'PAYFLOW.CLIENT_ERROR'
  | 'PAYFLOW.INVALID_REQUEST'
  | 'PAYFLOW.ABORTED';

export interface PayflowErrorInit {
  readonly endpoint: PayflowEndpointName;
  readonly method: string;
  readonly reached: PayflowReached;
  readonly status?: number;
  /** Payflow's own error code (`code` of an error body, `error` of an OAuth error). */
  readonly payflowCode?: string;
  readonly retryAfterMs?: number;
  readonly stage?: PayflowStage;
  /** 1-based attempt that produced the error. */
  readonly attempt?: number;
  readonly cause?: unknown;
}

export abstract class PayflowError extends AppError {
  abstract override readonly code: PayflowErrorCode;
  readonly endpoint: PayflowEndpointName;
  readonly method: string;
  readonly reached: PayflowReached;
  readonly status: number | undefined;
  readonly payflowCode: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly stage: PayflowStage;
  readonly attempt: number;

  constructor(message: string, init: PayflowErrorInit, extra: ErrorMetadata = {}) {
    const stage = init.stage ?? 'request';
    super(message, {
      cause: init.cause,
      metadata: {
        endpoint: init.endpoint,
        method: init.method,
        status: init.status,
        reached: init.reached,
        payflowCode: init.payflowCode,
        retryAfterMs: init.retryAfterMs,
        stage,
        attempt: init.attempt ?? 1,
        ...extra,
      },
    });
    this.endpoint = init.endpoint;
    this.method = init.method;
    this.reached = init.reached;
    this.status = init.status;
    this.payflowCode = init.payflowCode;
    this.retryAfterMs = init.retryAfterMs;
    this.stage = stage;
    this.attempt = init.attempt ?? 1;
  }

  /** Whether Payflow may have applied the request (the caller's "in doubt" test). */
  get mayHaveTakenEffect(): boolean {
    if (this.reached === 'no') return false;
    if (this.reached === 'maybe') return true;
    // An HTTP answer came: 4xx did not take effect, and neither did 503 (the server says
    // it is unable to handle requests now). 2xx (a broken body) and any other 5xx may have.
    if (this.status === 503) return false;
    return this.status === undefined || this.status < 400 || this.status >= 500;
  }

  /** The same failure re-attributed to another call, e.g. a token failure inside createPayment. */
  abstract withContext(init: PayflowErrorInit): PayflowError;

  protected init(): PayflowErrorInit {
    return {
      endpoint: this.endpoint,
      method: this.method,
      reached: this.reached,
      status: this.status,
      payflowCode: this.payflowCode,
      retryAfterMs: this.retryAfterMs,
      stage: this.stage,
      attempt: this.attempt,
      cause: this.cause,
    };
  }
}

/** 422: Payflow rejected the request; `detail` says where (loc) and why (type, msg). */
export class PayflowValidationError extends PayflowError {
  readonly code = 'PAYFLOW.VALIDATION';
  readonly transient = false;
  constructor(
    init: PayflowErrorInit,
    readonly detail: readonly ValidationDetail[],
  ) {
    const summary = detail
      .slice(0, 3)
      .map((entry) => `${entry.loc.join('.')} ${entry.type}`)
      .join('; ');
    const more = detail.length > 3 ? ` (+${detail.length - 3} more)` : '';
    super(`Payflow rejected ${init.endpoint} (422)${summary ? `: ${summary}${more}` : ''}`, init, {
      detailCount: detail.length,
      detailType: detail[0]?.type,
    });
  }
  withContext(init: PayflowErrorInit): PayflowValidationError {
    return new PayflowValidationError(init, this.detail);
  }
  /** Whether any entry is a business rule (`type` starting with `business.`). */
  get isBusinessRule(): boolean {
    return this.detail.some((entry) => entry.type.startsWith('business.'));
  }
}

/** 429: Payflow asked us to slow down; `retryAfterMs` from Retry-After when given. */
export class PayflowRateLimitedError extends PayflowError {
  readonly code = 'PAYFLOW.RATE_LIMITED';
  readonly transient = true;
  constructor(init: PayflowErrorInit) {
    super(
      `Payflow rate-limited ${init.endpoint} (429)${
        init.retryAfterMs === undefined ? '' : `, retry after ${init.retryAfterMs} ms`
      }`,
      init,
    );
  }
  withContext(init: PayflowErrorInit): PayflowRateLimitedError {
    return new PayflowRateLimitedError(init);
  }
}

/** 5xx. */
export class PayflowServerError extends PayflowError {
  readonly code = 'PAYFLOW.SERVER_ERROR';
  readonly transient = true;
  constructor(init: PayflowErrorInit) {
    super(`Payflow failed ${init.endpoint} (${init.status ?? '5xx'})`, init);
  }
  withContext(init: PayflowErrorInit): PayflowServerError {
    return new PayflowServerError(init);
  }
}

/** No usable answer: DNS, refused, reset, closed socket. */
export class PayflowNetworkError extends PayflowError {
  readonly code = 'PAYFLOW.NETWORK';
  readonly transient = true;
  constructor(
    init: PayflowErrorInit,
    readonly networkCode: string | undefined,
  ) {
    super(
      `Network failure calling Payflow ${init.endpoint}${networkCode ? ` (${networkCode})` : ''}, reached: ${init.reached}`,
      init,
      { networkCode },
    );
  }
  withContext(init: PayflowErrorInit): PayflowNetworkError {
    return new PayflowNetworkError(init, this.networkCode);
  }
}

export type PayflowTimeoutPhase = 'connect' | 'headers' | 'body' | 'deadline' | 'http408';

/** A time-out (connect, waiting for the answer, reading it) or an HTTP 408. */
export class PayflowTimeoutError extends PayflowError {
  readonly code = 'PAYFLOW.TIMEOUT';
  readonly transient = true;
  constructor(
    init: PayflowErrorInit,
    readonly phase: PayflowTimeoutPhase,
  ) {
    super(`Payflow ${init.endpoint} timed out (${phase}), reached: ${init.reached}`, init, {
      phase,
    });
  }
  withContext(init: PayflowErrorInit): PayflowTimeoutError {
    return new PayflowTimeoutError(init, this.phase);
  }
}

/** 401 after one token refresh, or the token endpoint refusing our client credentials. */
export class PayflowUnauthorizedError extends PayflowError {
  readonly code = 'PAYFLOW.UNAUTHORIZED';
  readonly transient = false;
  constructor(init: PayflowErrorInit) {
    super(
      `Payflow refused the credentials for ${init.endpoint} (401${
        init.payflowCode ? ` ${init.payflowCode}` : ''
      })`,
      init,
    );
  }
  withContext(init: PayflowErrorInit): PayflowUnauthorizedError {
    return new PayflowUnauthorizedError(init);
  }
}

/** 403: missing scope or an organization the client does not belong to. */
export class PayflowForbiddenError extends PayflowError {
  readonly code = 'PAYFLOW.FORBIDDEN';
  readonly transient = false;
  constructor(init: PayflowErrorInit) {
    super(
      `Payflow forbade ${init.endpoint} (403${init.payflowCode ? ` ${init.payflowCode}` : ''})`,
      init,
    );
  }
  withContext(init: PayflowErrorInit): PayflowForbiddenError {
    return new PayflowForbiddenError(init);
  }
}

/** 404: unknown payment, installment or document. */
export class PayflowNotFoundError extends PayflowError {
  readonly code = 'PAYFLOW.NOT_FOUND';
  readonly transient = false;
  constructor(init: PayflowErrorInit) {
    super(`Payflow found nothing for ${init.endpoint} (404)`, init);
  }
  withContext(init: PayflowErrorInit): PayflowNotFoundError {
    return new PayflowNotFoundError(init);
  }
}

/** An answer we cannot use: a 2xx whose body does not match the schema, not JSON, a 3xx. */
export class PayflowBadResponseError extends PayflowError {
  readonly code = 'PAYFLOW.BAD_RESPONSE';
  readonly transient = false;
  constructor(
    init: PayflowErrorInit,
    readonly problem: string,
  ) {
    super(`Payflow answered ${init.endpoint} with an unusable response: ${problem}`, init);
  }
  withContext(init: PayflowErrorInit): PayflowBadResponseError {
    return new PayflowBadResponseError(init, this.problem);
  }
}

/** Any other 4xx (400, 409, 413, …). */
export class PayflowClientError extends PayflowError {
  readonly code = 'PAYFLOW.CLIENT_ERROR';
  readonly transient = false;
  constructor(init: PayflowErrorInit) {
    super(
      `Payflow rejected ${init.endpoint} (${init.status ?? '4xx'}${
        init.payflowCode ? ` ${init.payflowCode}` : ''
      })`,
      init,
    );
  }
  withContext(init: PayflowErrorInit): PayflowClientError {
    return new PayflowClientError(init);
  }
}

/** The input could not be turned into a valid request; nothing was sent. */
export class PayflowInvalidRequestError extends PayflowError {
  readonly code = 'PAYFLOW.INVALID_REQUEST';
  readonly transient = false;
  constructor(
    init: PayflowErrorInit,
    readonly problem: string,
  ) {
    super(`Invalid ${init.endpoint} request, not sent: ${problem}`, init);
  }
  withContext(init: PayflowErrorInit): PayflowInvalidRequestError {
    return new PayflowInvalidRequestError(init, this.problem);
  }
}

/** The caller's signal aborted the call, or the client was closed. */
export class PayflowAbortedError extends PayflowError {
  readonly code = 'PAYFLOW.ABORTED';
  readonly transient = true;
  constructor(
    init: PayflowErrorInit,
    readonly reason: 'caller' | 'closed',
  ) {
    super(`Payflow ${init.endpoint} aborted (${reason}), reached: ${init.reached}`, init, {
      reason,
    });
  }
  withContext(init: PayflowErrorInit): PayflowAbortedError {
    return new PayflowAbortedError(init, this.reason);
  }
}

// ---------------------------------------------------------------- classification

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unusable. */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined {
  const first: string | undefined = typeof value === 'string' ? value : value?.[0];
  const text = first?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (/^\d+\.\d+$/.test(text)) return Math.ceil(Number(text) * 1000);
  // An HTTP date (IMF-fixdate and its obsolete forms) always names a month or weekday.
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Parses an error body for Payflow's own code; never throws. */
function payflowCodeOf(body: unknown): string | undefined {
  const plain = errorBodySchema.safeParse(body);
  if (plain.success) return plain.data.code;
  const oauth = oauthErrorSchema.safeParse(body);
  if (oauth.success) return oauth.data.error;
  if (typeof body === 'object' && body !== null && 'code' in body) {
    const code = body.code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** Keeps loc, msg and type of each 422 entry (drops extras such as an echoed `input`). */
export function validationDetailOf(body: unknown): ValidationDetail[] {
  const parsed = validationErrorSchema.safeParse(body);
  if (!parsed.success || parsed.data.detail === undefined) return [];
  return parsed.data.detail.map((entry) => ({
    loc: [...entry.loc],
    msg: entry.msg,
    type: entry.type,
  }));
}

export interface StatusContext {
  readonly endpoint: PayflowEndpointName;
  readonly method: string;
  readonly status: number;
  /** Parsed JSON error body, or undefined. */
  readonly body: unknown;
  readonly retryAfterMs: number | undefined;
  readonly stage?: PayflowStage;
  readonly attempt?: number;
}

/** The error for a non-2xx HTTP answer (reached is always `yes`). */
export function errorForStatus(context: StatusContext): PayflowError {
  const { status } = context;
  const init: PayflowErrorInit = {
    endpoint: context.endpoint,
    method: context.method,
    status,
    reached: 'yes',
    payflowCode: payflowCodeOf(context.body),
    retryAfterMs: context.retryAfterMs,
    stage: context.stage,
    attempt: context.attempt,
  };
  if (status === 422) return new PayflowValidationError(init, validationDetailOf(context.body));
  if (status === 429) return new PayflowRateLimitedError(init);
  if (status === 408) return new PayflowTimeoutError(init, 'http408');
  if (status === 401) return new PayflowUnauthorizedError(init);
  if (status === 403) return new PayflowForbiddenError(init);
  if (status === 404) return new PayflowNotFoundError(init);
  if (status >= 500) return new PayflowServerError(init);
  if (status >= 400) return new PayflowClientError(init);
  return new PayflowBadResponseError(init, `unexpected status ${status}`);
}

/** System error codes that mean the connection was never made, so nothing was sent. */
const NOT_CONNECTED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_DESTROYED',
  'UND_ERR_CLOSED',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export interface TransportContext {
  readonly endpoint: PayflowEndpointName;
  readonly method: string;
  /** The request head was handed to the socket (undici's sendHeaders), so it may have arrived. */
  readonly requestSent: boolean;
  /** Response headers arrived (the failure happened while reading the body). */
  readonly status: number | undefined;
  /** Why our own abort fired, when it did. */
  readonly abortedBy: 'deadline' | 'caller' | 'closed' | undefined;
  readonly stage?: PayflowStage;
  readonly attempt?: number;
}

/** The error code of a thrown value, walking `cause` a few levels (undici wraps some). */
export function errorCodeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The error for a failure without a (complete) HTTP answer. */
export function errorForTransport(error: unknown, context: TransportContext): PayflowError {
  const code = errorCodeOf(error);
  const answered = context.status !== undefined;
  const notConnected = code !== undefined && NOT_CONNECTED_CODES.has(code);
  // `no` only when nothing can have left this process: never connected, or never written.
  const reached: PayflowReached = answered
    ? 'yes'
    : notConnected || !context.requestSent
      ? 'no'
      : 'maybe';
  const init: PayflowErrorInit = {
    endpoint: context.endpoint,
    method: context.method,
    status: context.status,
    reached,
    stage: context.stage,
    attempt: context.attempt,
    cause: error,
  };
  if (context.abortedBy === 'deadline') return new PayflowTimeoutError(init, 'deadline');
  if (context.abortedBy === 'caller' || context.abortedBy === 'closed') {
    return new PayflowAbortedError(init, context.abortedBy);
  }
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new PayflowTimeoutError(init, 'connect');
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new PayflowTimeoutError(init, 'headers');
    case 'UND_ERR_BODY_TIMEOUT':
      return new PayflowTimeoutError(init, 'body');
    case 'UND_ERR_DESTROYED':
    case 'UND_ERR_CLOSED':
      return new PayflowAbortedError(init, 'closed');
    case undefined:
    default:
      return new PayflowNetworkError(init, code);
  }
}

/** A short, value-free description of zod issues: paths and messages only. */
export function describeZodError(error: ZodError): string {
  const issues = error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.map(String).join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  const more = error.issues.length > 5 ? ` (+${error.issues.length - 5} more)` : '';
  return issues.join('; ') + more;
}
