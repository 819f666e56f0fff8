/**
 * From what happened on the wire to a PayflowError (payflow.errors.ts): a non-2xx answer by
 * its status, a failure without a (complete) answer by its system error code and by whether
 * the request head had left this process. Kept apart from the error kinds so that these can
 * be read as a table.
 */
import type { ZodError } from 'zod';
import {
  payflowError,
  type PayflowError,
  type PayflowErrorInit,
  type PayflowReached,
  type PayflowStage,
  type PayflowTimeoutPhase,
} from '../payflow.errors.js';
import {
  errorBodySchema,
  oauthErrorSchema,
  validationErrorSchema,
  type ValidationDetail,
} from '../wire/payflow.schemas.js';
import type { PayflowEndpointName } from '../payflow.types.js';

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

/** The statuses that name their kind on their own (besides 422 and 408, which carry a fact). */
const CODE_OF_STATUS = new Map<
  number,
  'PAYFLOW.RATE_LIMITED' | 'PAYFLOW.UNAUTHORIZED' | 'PAYFLOW.FORBIDDEN' | 'PAYFLOW.NOT_FOUND'
>([
  [429, 'PAYFLOW.RATE_LIMITED'],
  [401, 'PAYFLOW.UNAUTHORIZED'],
  [403, 'PAYFLOW.FORBIDDEN'],
  [404, 'PAYFLOW.NOT_FOUND'],
]);

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
  if (status === 422)
    return payflowError('PAYFLOW.VALIDATION', init, validationDetailOf(context.body));
  if (status === 408) return payflowError('PAYFLOW.TIMEOUT', init, 'http408');
  const code = CODE_OF_STATUS.get(status);
  if (code !== undefined) return payflowError(code, init, undefined);
  if (status >= 500) return payflowError('PAYFLOW.SERVER_ERROR', init, undefined);
  if (status >= 400) return payflowError('PAYFLOW.CLIENT_ERROR', init, undefined);
  return payflowError('PAYFLOW.BAD_RESPONSE', init, `unexpected status ${status}`);
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

type SystemCodeKind =
  readonly ['PAYFLOW.TIMEOUT', PayflowTimeoutPhase] | readonly ['PAYFLOW.ABORTED', 'closed'];

/** System error codes with a kind of their own (any other is PAYFLOW.NETWORK). */
const KIND_OF_SYSTEM_CODE = new Map<string, SystemCodeKind>([
  ['UND_ERR_CONNECT_TIMEOUT', ['PAYFLOW.TIMEOUT', 'connect']],
  ['UND_ERR_HEADERS_TIMEOUT', ['PAYFLOW.TIMEOUT', 'headers']],
  ['UND_ERR_BODY_TIMEOUT', ['PAYFLOW.TIMEOUT', 'body']],
  ['UND_ERR_DESTROYED', ['PAYFLOW.ABORTED', 'closed']],
  ['UND_ERR_CLOSED', ['PAYFLOW.ABORTED', 'closed']],
]);

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
  if (context.abortedBy === 'deadline') return payflowError('PAYFLOW.TIMEOUT', init, 'deadline');
  if (context.abortedBy === 'caller' || context.abortedBy === 'closed') {
    return payflowError('PAYFLOW.ABORTED', init, context.abortedBy);
  }
  const known = code === undefined ? undefined : KIND_OF_SYSTEM_CODE.get(code);
  if (known !== undefined) return payflowError(known[0], init, known[1]);
  return payflowError('PAYFLOW.NETWORK', init, code);
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
