/**
 * Every failure of a Payflow call, as a typed error with a stable `code`.
 *
 * What a code means is data (PAYFLOW_ERROR_KINDS): whether the same call may succeed later
 * (`transient`: network, time-out, 408, 429, 5xx), the dead-letter reason of a permanent one,
 * and the message. One class, PayflowError, reads that table; the named classes
 * (PayflowServerError, …) exist so that callers can still test `instanceof` and build errors
 * in tests, and only carry the one extra fact some kinds have (422 detail, phase, …).
 *
 * - `reached`: whether the request may have reached Payflow, for the caller's retry decision
 *   on non-idempotent calls: `no` (nothing was sent: connect/DNS failure, refused, invalid
 *   input, a failed token request before it), `maybe` (sent, then reset or timed out before
 *   an answer), `yes` (an HTTP answer came).
 * - `mayHaveTakenEffect`: `reached` combined with the status: an answered 4xx (or 429/408)
 *   took no effect, a 5xx or a broken 2xx may have.
 *
 * Turning HTTP answers and transport failures into these errors: payflow.error-mapping.ts.
 * Messages and metadata carry endpoint names, statuses and Payflow's error codes only: never
 * request bodies, tokens, secrets, emails or phone numbers.
 */
import { AppError, type ErrorMetadata } from '../errors/app-error.js';
import type { ValidationDetail } from './wire/payflow.schemas.js';
import type { PayflowEndpointName } from './payflow.types.js';

export type PayflowReached = 'no' | 'maybe' | 'yes';
/** `token`: the failure was the token request made for this call (so the call itself was not sent). */
export type PayflowStage = 'token' | 'request';
export type PayflowTimeoutPhase = 'connect' | 'headers' | 'body' | 'deadline' | 'http408';

/** Each code, and the one extra fact an error of that code carries (undefined: none). */
export interface PayflowErrorFacts {
  /** 422: where (loc) and why (type, msg) Payflow rejected the request. */
  'PAYFLOW.VALIDATION': readonly ValidationDetail[];
  /** 429; `retryAfterMs` from Retry-After when given. */
  'PAYFLOW.RATE_LIMITED': undefined;
  /** 5xx. */
  'PAYFLOW.SERVER_ERROR': undefined;
  /** No usable answer (DNS, refused, reset, closed socket): the system error code. */
  'PAYFLOW.NETWORK': string | undefined;
  /** A time-out (connect, waiting for the answer, reading it) or an HTTP 408. */
  'PAYFLOW.TIMEOUT': PayflowTimeoutPhase;
  /** 401 after one token refresh, or the token endpoint refusing our client credentials. */
  'PAYFLOW.UNAUTHORIZED': undefined;
  /** 403: missing scope or an organization the client does not belong to. */
  'PAYFLOW.FORBIDDEN': undefined;
  /** 404: unknown payment, installment or document. */
  'PAYFLOW.NOT_FOUND': undefined;
  /** An answer we cannot use (a 2xx not matching the schema, not JSON, a 3xx): what is wrong. */
  'PAYFLOW.BAD_RESPONSE': string;
  /** Any other 4xx (400, 409, 413, …). */
  'PAYFLOW.CLIENT_ERROR': undefined;
  /** The input could not be turned into a valid request, so nothing was sent: why. */
  'PAYFLOW.INVALID_REQUEST': string;
  /** The caller's signal aborted the call, or the client was closed. */
  'PAYFLOW.ABORTED': 'caller' | 'closed';
}
export type PayflowErrorCode = keyof PayflowErrorFacts;

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

interface PayflowErrorKind<Fact> {
  readonly transient: boolean;
  readonly message: (init: PayflowErrorInit, fact: Fact) => string;
  /** Metadata the fact adds (non-sensitive only). */
  readonly metadata?: (fact: Fact) => ErrorMetadata;
}

const withPayflowCode = (init: PayflowErrorInit): string =>
  init.payflowCode ? ` ${init.payflowCode}` : '';

function summarize(detail: readonly ValidationDetail[]): string {
  const summary = detail
    .slice(0, 3)
    .map((entry) => `${entry.loc.join('.')} ${entry.type}`)
    .join('; ');
  const more = detail.length > 3 ? ` (+${detail.length - 3} more)` : '';
  return summary ? `: ${summary}${more}` : '';
}

/** What every code means. A permanent one is dead-lettered as `rejected_by_payflow`. */
export const PAYFLOW_ERROR_KINDS: {
  readonly [C in PayflowErrorCode]: PayflowErrorKind<PayflowErrorFacts[C]>;
} = {
  'PAYFLOW.VALIDATION': {
    transient: false,
    message: (init, detail) => `Payflow rejected ${init.endpoint} (422)${summarize(detail)}`,
    metadata: (detail) => ({ detailCount: detail.length, detailType: detail[0]?.type }),
  },
  'PAYFLOW.RATE_LIMITED': {
    transient: true,
    message: ({ endpoint, retryAfterMs }) =>
      `Payflow rate-limited ${endpoint} (429)${
        retryAfterMs === undefined ? '' : `, retry after ${retryAfterMs} ms`
      }`,
  },
  'PAYFLOW.SERVER_ERROR': {
    transient: true,
    message: (init) => `Payflow failed ${init.endpoint} (${init.status ?? '5xx'})`,
  },
  'PAYFLOW.NETWORK': {
    transient: true,
    message: (init, networkCode) =>
      `Network failure calling Payflow ${init.endpoint}${networkCode ? ` (${networkCode})` : ''}, reached: ${init.reached}`,
    metadata: (networkCode) => ({ networkCode }),
  },
  'PAYFLOW.TIMEOUT': {
    transient: true,
    message: (init, phase) =>
      `Payflow ${init.endpoint} timed out (${phase}), reached: ${init.reached}`,
    metadata: (phase) => ({ phase }),
  },
  'PAYFLOW.UNAUTHORIZED': {
    transient: false,
    message: (init) =>
      `Payflow refused the credentials for ${init.endpoint} (401${withPayflowCode(init)})`,
  },
  'PAYFLOW.FORBIDDEN': {
    transient: false,
    message: (init) => `Payflow forbade ${init.endpoint} (403${withPayflowCode(init)})`,
  },
  'PAYFLOW.NOT_FOUND': {
    transient: false,
    message: (init) => `Payflow found nothing for ${init.endpoint} (404)`,
  },
  'PAYFLOW.BAD_RESPONSE': {
    transient: false,
    message: (init, problem) =>
      `Payflow answered ${init.endpoint} with an unusable response: ${problem}`,
  },
  'PAYFLOW.CLIENT_ERROR': {
    transient: false,
    message: (init) =>
      `Payflow rejected ${init.endpoint} (${init.status ?? '4xx'}${withPayflowCode(init)})`,
  },
  'PAYFLOW.INVALID_REQUEST': {
    transient: false,
    message: (init, problem) => `Invalid ${init.endpoint} request, not sent: ${problem}`,
  },
  'PAYFLOW.ABORTED': {
    transient: true,
    message: (init, reason) =>
      `Payflow ${init.endpoint} aborted (${reason}), reached: ${init.reached}`,
    metadata: (reason) => ({ reason }),
  },
};

/** What the table says of one error: its message, whether it is transient, its metadata. */
interface KindOfError {
  readonly message: string;
  readonly transient: boolean;
  readonly metadata: ErrorMetadata | undefined;
}

/** Every failure of a Payflow call (`instanceof PayflowError`). */
export abstract class PayflowError extends AppError {
  abstract override readonly code: PayflowErrorCode;
  readonly transient: boolean;
  /** A permanent failure is dead-lettered as `rejected_by_payflow`; a transient one retried. */
  override readonly deadLetterReason: 'rejected_by_payflow' | undefined;
  readonly endpoint: PayflowEndpointName;
  readonly method: string;
  readonly reached: PayflowReached;
  readonly status: number | undefined;
  readonly payflowCode: string | undefined;
  override readonly retryAfterMs: number | undefined;
  readonly stage: PayflowStage;
  readonly attempt: number;

  protected constructor(init: PayflowErrorInit, kind: KindOfError) {
    const stage = init.stage ?? 'request';
    super(kind.message, {
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
        ...kind.metadata,
      },
    });
    // The token endpoint refusing the bridge's own credentials says nothing about the event:
    // a secret rotated at Payflow before its file was updated, or a misconfiguration an
    // operator fixes. The event waits and is retried with back-off, like Payflow being down,
    // instead of being dead-lettered as rejected (docs/assumptions.md).
    const ownCredentialsRefused = stage === 'token' && init.payflowCode === 'invalid_client';
    this.transient = kind.transient || ownCredentialsRefused;
    this.deadLetterReason = this.transient ? undefined : 'rejected_by_payflow';
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
}

/** The base of the named classes: one code, its fact, the rest from PAYFLOW_ERROR_KINDS. */
export abstract class PayflowErrorOf<C extends PayflowErrorCode> extends PayflowError {
  readonly code: C;

  protected constructor(
    code: C,
    init: PayflowErrorInit,
    /** The kind's extra fact (PayflowErrorFacts), kept for withContext. */
    protected readonly fact: PayflowErrorFacts[C],
  ) {
    const kind: PayflowErrorKind<PayflowErrorFacts[C]> = PAYFLOW_ERROR_KINDS[code];
    super(init, {
      message: kind.message(init, fact),
      transient: kind.transient,
      metadata: kind.metadata?.(fact),
    });
    this.code = code;
  }

  withContext(init: PayflowErrorInit): PayflowErrorOf<C> {
    return payflowError(this.code, init, this.fact);
  }
}

// ---------------------------------------------------------------- the named kinds

type PlainCode = {
  [C in PayflowErrorCode]: PayflowErrorFacts[C] extends undefined ? C : never;
}[PayflowErrorCode];

/** The class of a code without an extra fact: `new PayflowServerError(init)`. */
function plainKind<C extends PlainCode>(code: C, name: string) {
  const Kind = class extends PayflowErrorOf<C> {
    constructor(init: PayflowErrorInit) {
      super(code, init, undefined);
    }
  };
  Object.defineProperty(Kind, 'name', { value: name });
  return Kind;
}

export const PayflowRateLimitedError = plainKind('PAYFLOW.RATE_LIMITED', 'PayflowRateLimitedError');
export const PayflowServerError = plainKind('PAYFLOW.SERVER_ERROR', 'PayflowServerError');
export const PayflowUnauthorizedError = plainKind(
  'PAYFLOW.UNAUTHORIZED',
  'PayflowUnauthorizedError',
);
export const PayflowForbiddenError = plainKind('PAYFLOW.FORBIDDEN', 'PayflowForbiddenError');
export const PayflowNotFoundError = plainKind('PAYFLOW.NOT_FOUND', 'PayflowNotFoundError');
export const PayflowClientError = plainKind('PAYFLOW.CLIENT_ERROR', 'PayflowClientError');
export type PayflowRateLimitedError = InstanceType<typeof PayflowRateLimitedError>;
export type PayflowServerError = InstanceType<typeof PayflowServerError>;
export type PayflowUnauthorizedError = InstanceType<typeof PayflowUnauthorizedError>;
export type PayflowForbiddenError = InstanceType<typeof PayflowForbiddenError>;
export type PayflowNotFoundError = InstanceType<typeof PayflowNotFoundError>;
export type PayflowClientError = InstanceType<typeof PayflowClientError>;

export class PayflowValidationError extends PayflowErrorOf<'PAYFLOW.VALIDATION'> {
  constructor(
    init: PayflowErrorInit,
    readonly detail: readonly ValidationDetail[],
  ) {
    super('PAYFLOW.VALIDATION', init, detail);
  }
  /** Whether any entry is a business rule (`type` starting with `business.`). */
  get isBusinessRule(): boolean {
    return this.detail.some((entry) => entry.type.startsWith('business.'));
  }
}

export class PayflowNetworkError extends PayflowErrorOf<'PAYFLOW.NETWORK'> {
  constructor(
    init: PayflowErrorInit,
    readonly networkCode: string | undefined,
  ) {
    super('PAYFLOW.NETWORK', init, networkCode);
  }
}

export class PayflowTimeoutError extends PayflowErrorOf<'PAYFLOW.TIMEOUT'> {
  constructor(
    init: PayflowErrorInit,
    readonly phase: PayflowTimeoutPhase,
  ) {
    super('PAYFLOW.TIMEOUT', init, phase);
  }
}

/** The class of a code whose fact is a `problem`: what is wrong, without values. */
function problemKind<C extends 'PAYFLOW.BAD_RESPONSE' | 'PAYFLOW.INVALID_REQUEST'>(
  code: C,
  name: string,
) {
  const Kind = class extends PayflowErrorOf<C> {
    constructor(
      init: PayflowErrorInit,
      readonly problem: string,
    ) {
      super(code, init, problem);
    }
  };
  Object.defineProperty(Kind, 'name', { value: name });
  return Kind;
}

export const PayflowBadResponseError = problemKind(
  'PAYFLOW.BAD_RESPONSE',
  'PayflowBadResponseError',
);
export const PayflowInvalidRequestError = problemKind(
  'PAYFLOW.INVALID_REQUEST',
  'PayflowInvalidRequestError',
);
export type PayflowBadResponseError = InstanceType<typeof PayflowBadResponseError>;
export type PayflowInvalidRequestError = InstanceType<typeof PayflowInvalidRequestError>;

export class PayflowAbortedError extends PayflowErrorOf<'PAYFLOW.ABORTED'> {
  constructor(
    init: PayflowErrorInit,
    readonly reason: 'caller' | 'closed',
  ) {
    super('PAYFLOW.ABORTED', init, reason);
  }
}

// ---------------------------------------------------------------- by code

const CLASS_OF_CODE: {
  readonly [C in PayflowErrorCode]: new (
    init: PayflowErrorInit,
    fact: PayflowErrorFacts[C],
  ) => PayflowErrorOf<C>;
} = {
  'PAYFLOW.VALIDATION': PayflowValidationError,
  'PAYFLOW.RATE_LIMITED': PayflowRateLimitedError,
  'PAYFLOW.SERVER_ERROR': PayflowServerError,
  'PAYFLOW.NETWORK': PayflowNetworkError,
  'PAYFLOW.TIMEOUT': PayflowTimeoutError,
  'PAYFLOW.UNAUTHORIZED': PayflowUnauthorizedError,
  'PAYFLOW.FORBIDDEN': PayflowForbiddenError,
  'PAYFLOW.NOT_FOUND': PayflowNotFoundError,
  'PAYFLOW.BAD_RESPONSE': PayflowBadResponseError,
  'PAYFLOW.CLIENT_ERROR': PayflowClientError,
  'PAYFLOW.INVALID_REQUEST': PayflowInvalidRequestError,
  'PAYFLOW.ABORTED': PayflowAbortedError,
};

/** The error of `code` (an instance of its named class), with the fact its kind carries. */
export function payflowError<C extends PayflowErrorCode>(
  code: C,
  init: PayflowErrorInit,
  fact: PayflowErrorFacts[C],
): PayflowErrorOf<C> {
  const Kind: new (init: PayflowErrorInit, fact: PayflowErrorFacts[C]) => PayflowErrorOf<C> =
    CLASS_OF_CODE[code];
  return new Kind(init, fact);
}
