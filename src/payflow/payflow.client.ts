/**
 * PayflowClient: the typed HTTP client of Payflow's 18 endpoints (both groups).
 *
 * - undici `Agent`: one connection pool per origin (`connections`, default 64), connect,
 *   headers and body time-outs, keep-alive; `close()` releases it.
 * - OAuth 2.0 client credentials (form-encoded, HTTP Basic client authentication); the token
 *   is cached until shortly before expiry, fetched by one request however many callers wait,
 *   and refreshed once after a 401 (then the 401 is final).
 * - GET, PUT and the token request are retried on transient failures (exponential back-off
 *   with jitter, Retry-After honoured). POST and DELETE are never retried here: the caller
 *   decides with `error.reached`.
 * - A 429 closes a client-wide gate for its Retry-After (capped): every later call waits.
 * - Each request takes one of the origin's `connections` slots before it is handed to
 *   undici (so it never queues inside undici), then runs the caller's send hook
 *   (payflow-send-hook.ts), then leaves: a call still waiting for the gate, the token or a
 *   slot has certainly not been sent.
 * - Requests and responses are validated with the shared zod schemas; amounts cross the client
 *   as integer minor units (payflow.mapping.ts). Fields the spec types `any` or does not show
 *   are read in any reasonable shape and normalized (payflow.lenient.ts).
 * - uploadDocument sends JSON, or multipart/form-data with `documentUpload: 'multipart'`
 *   (payflow.multipart.ts).
 * - Logs one debug line per HTTP exchange (endpoint, method, status, duration); never bodies,
 *   tokens, secrets or personal data.
 */
import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { PassThrough, Readable } from 'node:stream';
import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { Agent, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { silentLogger, type AppLogger } from '../common/logger.js';
import { payflowSendHookOf } from './payflow-send-hook.js';
import {
  PayflowAbortedError,
  PayflowBadResponseError,
  PayflowError,
  PayflowInvalidRequestError,
  describeZodError,
  errorForStatus,
  errorForTransport,
  parseRetryAfter,
  type PayflowErrorInit,
} from './payflow.errors.js';
import {
  fromWireCreatePayment,
  fromWireDocument,
  fromWireInstallment,
  fromWirePaymentStatus,
  fromWireRefund,
  toWireCreateInstallment,
  toWireCreatePayment,
  toWireRefund,
  toWireUpdateInstallment,
} from './payflow.mapping.js';
import {
  decodeDocumentContent,
  uploadDocumentMultipart,
  type MultipartBody,
} from './payflow.multipart.js';
import { retryDelayMs, sleep } from './payflow.retry.js';
import {
  cancelPaymentResponseSchema,
  createInstallmentSchema,
  createPaymentResponseSchema,
  createPaymentSchema,
  deleteDocumentResponseSchema,
  documentSchema,
  installmentRecordSchema,
  manualPaidResponseSchema,
  manualPaidSchema,
  organizationsResponseSchema,
  paymentMethodsResponseSchema,
  paymentStatusResponseSchema,
  pingResponseSchema,
  printReceiptResponseSchema,
  printReceiptSchema,
  refundResponseSchema,
  refundSchema,
  resendResponseSchema,
  resendSchema,
  settlementQuerySchema,
  tokenRequestSchema,
  tokenResponseSchema,
  unshownInstallmentRecordSchema,
  updateInstallmentSchema,
  uploadDocumentSchema,
} from './payflow.schemas.js';
import {
  TokenCache,
  tokenLifetimeSeconds,
  type CachedToken,
  type FetchedToken,
} from './payflow.token.js';
import {
  SecretString,
  type CallOptions,
  type CreatePaymentInput,
  type CreatedPayment,
  type CurrencyCallOptions,
  type DeletedDocument,
  type Installment,
  type InstallmentInput,
  type IssuedToken,
  type ManualPaidResponse,
  type MarkPaidInput,
  type OptionalCurrencyCallOptions,
  type Organization,
  type PayflowApi,
  type PayflowCallEvent,
  type PayflowClientOptions,
  type PayflowDocument,
  type PayflowDocumentUpload,
  type PayflowEndpointName,
  type PaymentMethod,
  type PaymentStatus,
  type PingResponse,
  type PrintReceiptInput,
  type PrintReceiptResponse,
  type RefundInput,
  type RefundResult,
  type ResendInput,
  type ResendResponse,
  type SettlementCsv,
  type SettlementCsvQuery,
  type UpdateInstallmentInput,
  type UploadDocumentInput,
} from './payflow.types.js';

/** Nest injection tokens (see payflow.module.ts). */
export const PAYFLOW_CLIENT_OPTIONS = Symbol('PAYFLOW_CLIENT_OPTIONS');
export const PAYFLOW_LOGGER = Symbol('PAYFLOW_LOGGER');

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface EndpointDef {
  readonly name: PayflowEndpointName;
  readonly method: HttpMethod;
  readonly group: 'A' | 'B';
  /** Retried inside the client on transient failures. */
  readonly idempotent: boolean;
}

function endpoint(
  name: PayflowEndpointName,
  method: HttpMethod,
  group: 'A' | 'B',
  idempotent = method === 'GET' || method === 'PUT',
): EndpointDef {
  return { name, method, group, idempotent };
}

/** The 18 endpoints. Only GET, PUT and the token request are idempotent for retrying. */
export const PAYFLOW_ENDPOINTS: { readonly [K in PayflowEndpointName]: EndpointDef } = {
  createPayment: endpoint('createPayment', 'POST', 'A'),
  uploadDocument: endpoint('uploadDocument', 'POST', 'A'),
  deleteDocument: endpoint('deleteDocument', 'DELETE', 'A'),
  cancelPayment: endpoint('cancelPayment', 'DELETE', 'A'),
  refund: endpoint('refund', 'POST', 'A'),
  getPaymentStatus: endpoint('getPaymentStatus', 'GET', 'A'),
  createInstallment: endpoint('createInstallment', 'POST', 'A'),
  getInstallment: endpoint('getInstallment', 'GET', 'A'),
  updateInstallment: endpoint('updateInstallment', 'PUT', 'A'),
  deleteInstallment: endpoint('deleteInstallment', 'DELETE', 'A'),
  token: endpoint('token', 'POST', 'B', true),
  ping: endpoint('ping', 'GET', 'B'),
  listOrganizations: endpoint('listOrganizations', 'GET', 'B'),
  generateSettlementCsv: endpoint('generateSettlementCsv', 'GET', 'B'),
  listPaymentMethods: endpoint('listPaymentMethods', 'GET', 'B'),
  resendPayment: endpoint('resendPayment', 'POST', 'B'),
  printTerminalReceipt: endpoint('printTerminalReceipt', 'POST', 'B'),
  markPaid: endpoint('markPaid', 'POST', 'B'),
};

const DEFAULTS = {
  connections: 64,
  connectTimeoutMs: 5_000,
  requestTimeoutMs: 30_000,
  maxAttempts: 3,
  retryBaseDelayMs: 200,
  retryMaxDelayMs: 5_000,
  maxRetryAfterMs: 60_000,
  defaultRateLimitDelayMs: 1_000,
  keepAliveTimeoutMs: 30_000,
  closeTimeoutMs: 5_000,
  userAgent: 'payflow-bridge',
} as const;

/** Largest error body read (the rest is discarded). */
const ERROR_BODY_LIMIT = 64 * 1024;
const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID_IN_HEAD = /\r\nx-request-id: ([0-9a-f-]{36})\r\n/i;
const SEND_HEADERS_CHANNEL = 'undici:client:sendHeaders';

interface Base {
  readonly origin: string;
  /** Path prefix without a trailing slash ('' or '/partner'). */
  readonly prefix: string;
}

function parseBase(url: string, what: string): Base {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`PayflowClient: ${what} is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`PayflowClient: ${what} must be http(s)`);
  }
  return { origin: parsed.origin, prefix: parsed.pathname.replace(/\/+$/, '') };
}

/** One request as the retry loop sees it. */
interface HttpCall {
  readonly endpoint: EndpointDef;
  readonly base: Base;
  /** Path below the base, query included. */
  readonly path: string;
  /** JSON or form text, or the bytes of a multipart body. */
  readonly body?: string | Buffer;
  readonly contentType?: string;
  readonly accept: string;
  readonly organizationId?: string;
  readonly signal?: AbortSignal;
  /** Basic for the token request, Bearer for everything else. */
  readonly auth: 'basic' | 'bearer';
}

interface AttemptContext {
  readonly attempt: number;
  readonly status: number;
  /** Init for errors raised while consuming this (2xx) response. */
  readonly errorInit: PayflowErrorInit;
}

type Consume<T> = (response: Dispatcher.ResponseData, context: AttemptContext) => Promise<T>;

class DeadlineExceeded extends Error {
  constructor() {
    super('Payflow request deadline exceeded');
    this.name = 'DeadlineExceeded';
  }
}

class ClientClosed extends Error {
  constructor() {
    super('PayflowClient is closed');
    this.name = 'ClientClosed';
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readLimited(body: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    if (size + buffer.length > limit) {
      chunks.push(buffer.subarray(0, limit - size));
      body.destroy();
      break;
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readAll(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJsonOrUndefined(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 appendix B). */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

function segment(value: string, what: string, name: PayflowEndpointName): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw invalidRequest(name, `${what} must be a non-empty string`);
  }
  return encodeURIComponent(value);
}

function invalidRequest(name: PayflowEndpointName, problem: string): PayflowInvalidRequestError {
  return new PayflowInvalidRequestError(
    { endpoint: name, method: PAYFLOW_ENDPOINTS[name].method, reached: 'no' },
    problem,
  );
}

@Injectable()
export class PayflowClient implements PayflowApi, OnApplicationShutdown {
  private readonly agent: Agent;
  private readonly groupA: Base;
  private readonly groupB: Base;
  private readonly tokenBase: Base;
  private readonly tokenPath: string;
  private readonly basicAuthorization: string;
  private readonly logger: AppLogger;
  private readonly tokens: TokenCache;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly settings: {
    readonly requestTimeoutMs: number;
    readonly maxAttempts: number;
    readonly baseDelayMs: number;
    readonly maxDelayMs: number;
    readonly maxRetryAfterMs: number;
    readonly defaultRateLimitDelayMs: number;
    readonly userAgent: string;
    readonly scopes: readonly string[] | undefined;
    readonly documentUpload: PayflowDocumentUpload;
  };
  private readonly onCall: ((event: PayflowCallEvent) => void) | undefined;
  /** Requests in flight by request id: whether their head was handed to the socket. */
  private readonly sent = new Map<string, { sent: boolean }>();
  private readonly closeController = new AbortController();
  private closing: Promise<void> | undefined;
  /** Monotonic time (performance.now) before which no request is sent (set by a 429). */
  private notBefore = 0;
  /** Connection slots per origin (as many as undici's pool has connections). */
  private readonly slots = new Map<string, Slots>();
  private readonly connections: number;

  constructor(
    @Inject(PAYFLOW_CLIENT_OPTIONS) options: PayflowClientOptions,
    @Optional() @Inject(PAYFLOW_LOGGER) logger?: AppLogger,
  ) {
    this.groupA = parseBase(options.baseUrl, 'baseUrl');
    this.groupB = parseBase(options.partnerBaseUrl, 'partnerBaseUrl');
    const tokenUrl = options.tokenUrl ?? `${options.partnerBaseUrl.replace(/\/+$/, '')}/auth/token`;
    const token = parseBase(tokenUrl, 'tokenUrl');
    this.tokenBase = { origin: token.origin, prefix: '' };
    this.tokenPath = token.prefix || '/';
    if (!options.clientId || !options.clientSecret) {
      throw new Error('PayflowClient: clientId and clientSecret are required');
    }
    this.basicAuthorization = `Basic ${Buffer.from(
      `${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`,
    ).toString('base64')}`;
    this.logger = logger ?? silentLogger();
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.onCall = options.onCall;
    this.settings = {
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      maxAttempts: Math.max(1, options.maxAttempts ?? DEFAULTS.maxAttempts),
      baseDelayMs: options.retryBaseDelayMs ?? DEFAULTS.retryBaseDelayMs,
      maxDelayMs: options.retryMaxDelayMs ?? DEFAULTS.retryMaxDelayMs,
      maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs,
      defaultRateLimitDelayMs: options.defaultRateLimitDelayMs ?? DEFAULTS.defaultRateLimitDelayMs,
      userAgent: options.userAgent ?? DEFAULTS.userAgent,
      scopes: options.scopes,
      documentUpload: options.documentUpload ?? 'json',
    };
    this.connections = options.connections ?? DEFAULTS.connections;
    this.agent = new Agent({
      connections: this.connections,
      connectTimeout: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      headersTimeout: this.settings.requestTimeoutMs,
      bodyTimeout: this.settings.requestTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULTS.keepAliveTimeoutMs,
      pipelining: 1,
    });
    // Every waiting call listens to the close signal; hundreds may wait at once.
    setMaxListeners(0, this.closeController.signal);
    this.tokens = new TokenCache(() => this.fetchToken(), this.now);
    subscribe(SEND_HEADERS_CHANNEL, this.onSendHeaders);
  }

  // ============================================================ group A: payments

  async createPayment(
    input: CreatePaymentInput,
    options: CallOptions = {},
  ): Promise<CreatedPayment> {
    const name = 'createPayment';
    const body = this.prepare(name, createPaymentSchema, () => toWireCreatePayment(input));
    const currency = input.payment.currency;
    return this.execute(
      this.jsonCall(name, this.groupA, '/api/payments', options, body),
      this.json(createPaymentResponseSchema, (wire) => fromWireCreatePayment(wire, currency)),
    );
  }

  async cancelPayment(
    paymentId: string,
    options: OptionalCurrencyCallOptions = {},
  ): Promise<PaymentStatus> {
    const name = 'cancelPayment';
    const path = `/api/payments/${segment(paymentId, 'paymentId', name)}`;
    return this.execute(
      this.jsonCall(name, this.groupA, path, options),
      this.json(cancelPaymentResponseSchema, (wire) =>
        fromWirePaymentStatus(wire, options.currency),
      ),
    );
  }

  async getPaymentStatus(
    paymentId: string,
    options: OptionalCurrencyCallOptions = {},
  ): Promise<PaymentStatus> {
    const name = 'getPaymentStatus';
    const path = `/api/payments/${segment(paymentId, 'paymentId', name)}/paymentStatus`;
    return this.execute(
      this.jsonCall(name, this.groupA, path, options),
      this.json(paymentStatusResponseSchema, (wire) =>
        fromWirePaymentStatus(wire, options.currency),
      ),
    );
  }

  async refund(input: RefundInput, options: CallOptions = {}): Promise<RefundResult> {
    const name = 'refund';
    const body = this.prepare(name, refundSchema, () => toWireRefund(input));
    return this.execute(
      this.jsonCall(name, this.groupA, '/api/refund', options, body),
      this.json(refundResponseSchema, fromWireRefund),
    );
  }

  async createInstallment(
    paymentId: string,
    input: InstallmentInput,
    options: CurrencyCallOptions,
  ): Promise<Installment> {
    const name = 'createInstallment';
    const path = `/api/payments/${segment(paymentId, 'paymentId', name)}/installments/create`;
    const body = this.prepare(name, createInstallmentSchema, () =>
      toWireCreateInstallment(input, options.currency),
    );
    return this.execute(
      this.jsonCall(name, this.groupA, path, options, body),
      this.installmentRecord(options.currency),
    );
  }

  async getInstallment(
    paymentId: string,
    installmentId: string,
    options: CurrencyCallOptions,
  ): Promise<Installment> {
    const name = 'getInstallment';
    return this.execute(
      this.jsonCall(
        name,
        this.groupA,
        this.installmentPath(name, paymentId, installmentId),
        options,
      ),
      this.installmentRecord(options.currency),
    );
  }

  async updateInstallment(
    paymentId: string,
    installmentId: string,
    input: UpdateInstallmentInput,
    options: CurrencyCallOptions,
  ): Promise<Installment> {
    const name = 'updateInstallment';
    const path = this.installmentPath(name, paymentId, installmentId);
    const body = this.prepare(name, updateInstallmentSchema, () =>
      toWireUpdateInstallment(input, options.currency),
    );
    return this.execute(
      this.jsonCall(name, this.groupA, path, options, body),
      this.installmentRecord(options.currency, 'unshown'),
    );
  }

  async deleteInstallment(
    paymentId: string,
    installmentId: string,
    options: CurrencyCallOptions,
  ): Promise<Installment> {
    const name = 'deleteInstallment';
    return this.execute(
      this.jsonCall(
        name,
        this.groupA,
        this.installmentPath(name, paymentId, installmentId),
        options,
      ),
      this.installmentRecord(options.currency, 'unshown'),
    );
  }

  async uploadDocument(
    input: UploadDocumentInput,
    options: CallOptions = {},
  ): Promise<PayflowDocument> {
    const name = 'uploadDocument';
    const path = '/api/payments/uploadDocument';
    const body = this.prepare(name, uploadDocumentSchema, () => input);
    const sentBytes = Buffer.byteLength(body.contentBase64, 'base64');
    const read = this.json(documentSchema, (wire) => fromWireDocument(wire, body, sentBytes));
    if (this.settings.documentUpload === 'json') {
      return this.execute(this.jsonCall(name, this.groupA, path, options, body), read);
    }
    let multipart: MultipartBody;
    try {
      multipart = await uploadDocumentMultipart(body, decodeDocumentContent(body.contentBase64));
    } catch (error) {
      throw invalidRequest(name, error instanceof Error ? error.message : 'cannot build the body');
    }
    return this.execute(
      {
        ...this.jsonCall(name, this.groupA, path, options),
        body: multipart.bytes,
        contentType: multipart.contentType,
      },
      read,
    );
  }

  async deleteDocument(
    paymentId: string,
    documentId: string,
    options: CallOptions = {},
  ): Promise<DeletedDocument> {
    const name = 'deleteDocument';
    const path = `/api/payments/uploadDocument/${segment(paymentId, 'paymentId', name)}/${segment(
      documentId,
      'documentId',
      name,
    )}`;
    return this.execute(
      this.jsonCall(name, this.groupA, path, options),
      this.json(deleteDocumentResponseSchema, (wire) => wire),
    );
  }

  // ============================================================ group B: partner

  async issueToken(
    options: { readonly scopes?: readonly string[]; readonly signal?: AbortSignal } = {},
  ): Promise<IssuedToken> {
    const token = await this.requestToken(options.scopes ?? this.settings.scopes, options.signal);
    return {
      accessToken: new SecretString(token.access_token),
      tokenType: token.token_type,
      expiresInSeconds: tokenLifetimeSeconds(token.expires_in),
      scopes: token.scope === undefined ? [] : token.scope.split(' ').filter(Boolean),
    };
  }

  async ping(options: CallOptions = {}): Promise<PingResponse> {
    return this.execute(
      this.jsonCall('ping', this.groupB, '/auth/ping', options),
      this.json(pingResponseSchema, (wire) => wire),
    );
  }

  async listOrganizations(options: CallOptions = {}): Promise<readonly Organization[]> {
    return this.execute(
      this.jsonCall('listOrganizations', this.groupB, '/auth/organizations', options),
      this.json(organizationsResponseSchema, (wire) => wire.organizations),
    );
  }

  async listPaymentMethods(options: CallOptions = {}): Promise<readonly PaymentMethod[]> {
    return this.execute(
      this.jsonCall('listPaymentMethods', this.groupB, '/payment-methods', options),
      this.json(paymentMethodsResponseSchema, (wire) => wire.paymentMethods),
    );
  }

  async resendPayment(input: ResendInput, options: CallOptions = {}): Promise<ResendResponse> {
    const name = 'resendPayment';
    const body = this.prepare(name, resendSchema, () => input);
    return this.execute(
      this.jsonCall(name, this.groupB, '/payment-methods/resend', options, body),
      this.json(resendResponseSchema, (wire) => wire),
    );
  }

  async printTerminalReceipt(
    paymentId: string,
    input: PrintReceiptInput = {},
    options: CallOptions = {},
  ): Promise<PrintReceiptResponse> {
    const name = 'printTerminalReceipt';
    const path = `/payments/${segment(paymentId, 'paymentId', name)}/receipts/terminal/print`;
    const body = this.prepare(name, printReceiptSchema, () => input);
    return this.execute(
      this.jsonCall(name, this.groupB, path, options, body),
      this.json(printReceiptResponseSchema, (wire) => wire),
    );
  }

  async markPaid(
    paymentId: string,
    input: MarkPaidInput = {},
    options: CallOptions = {},
  ): Promise<ManualPaidResponse> {
    const name = 'markPaid';
    const path = `/payments/${segment(paymentId, 'paymentId', name)}/manual-paid`;
    const body = this.prepare(name, manualPaidSchema, () => input);
    return this.execute(
      this.jsonCall(name, this.groupB, path, options, body),
      this.json(manualPaidResponseSchema, (wire) => wire),
    );
  }

  async generateSettlementCsv(
    query: SettlementCsvQuery,
    options: CallOptions = {},
  ): Promise<SettlementCsv> {
    const name = 'generateSettlementCsv';
    const parsed = this.prepare(name, settlementQuerySchema, () => query);
    const search = new URLSearchParams({
      from: parsed.from,
      to: parsed.to,
      format: parsed.format,
    });
    const call: HttpCall = {
      ...this.jsonCall(
        name,
        this.groupB,
        `/settlements/generate_csv?${search.toString()}`,
        options,
      ),
      accept: 'text/csv',
    };
    return this.execute(call, (response, context) => this.streamCsv(response, context));
  }

  async generateSettlementCsvText(
    query: SettlementCsvQuery,
    options: CallOptions = {},
  ): Promise<string> {
    const csv = await this.generateSettlementCsv(query, options);
    return csv.text();
  }

  // ============================================================ lifecycle

  /**
   * Refuses new calls, ends waits (gate, back-off), lets requests in flight finish (at most
   * a few seconds, then their connections are destroyed) and releases the pool.
   */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.closeController.abort(new ClientClosed());
    unsubscribe(SEND_HEADERS_CHANNEL, this.onSendHeaders);
    this.closing = (async () => {
      let timer: NodeJS.Timeout | undefined;
      const forced = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), DEFAULTS.closeTimeoutMs);
        timer.unref();
      });
      const result = await Promise.race([this.agent.close().then(() => 'closed' as const), forced]);
      clearTimeout(timer);
      if (result === 'timeout') await this.agent.destroy();
    })();
    return this.closing;
  }

  /**
   * Closed at application shutdown, not at module destroy: Nest destroys modules before
   * the order transport drains, and in-flight handlers still need Payflow then.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /** Token requests this client has started for its own cache (diagnostics). */
  get tokenFetchCount(): number {
    return this.tokens.fetchCount;
  }

  // ============================================================ internals: requests

  /**
   * Decodes an installment record (its amounts in `currency`, which the record omits); `unshown`
   * for the answers whose shape the spec does not show (PUT and DELETE).
   */
  private installmentRecord(currency: string, shape: 'record' | 'unshown' = 'record') {
    const schema = shape === 'record' ? installmentRecordSchema : unshownInstallmentRecordSchema;
    return this.json(schema, (wire) => fromWireInstallment(wire, currency));
  }

  private installmentPath(
    name: PayflowEndpointName,
    paymentId: string,
    installmentId: string,
  ): string {
    return `/api/payments/${segment(paymentId, 'paymentId', name)}/installments/${segment(
      installmentId,
      'installmentId',
      name,
    )}`;
  }

  private jsonCall(
    name: PayflowEndpointName,
    base: Base,
    path: string,
    options: CallOptions,
    body?: unknown,
  ): HttpCall {
    if (options.organizationId !== undefined && options.organizationId.trim() === '') {
      throw invalidRequest(name, 'organizationId must not be empty');
    }
    return {
      endpoint: PAYFLOW_ENDPOINTS[name],
      base,
      path,
      body: body === undefined ? undefined : JSON.stringify(body),
      contentType: body === undefined ? undefined : 'application/json',
      accept: 'application/json',
      organizationId: options.organizationId,
      signal: options.signal,
      auth: 'bearer',
    };
  }

  /** Builds and validates a request body; any failure means nothing is sent. */
  private prepare<S extends z.ZodType>(
    name: PayflowEndpointName,
    schema: S,
    build: () => unknown,
  ): z.output<S> {
    let wire: unknown;
    try {
      wire = build();
    } catch (error) {
      throw invalidRequest(name, error instanceof Error ? error.message : 'cannot build the body');
    }
    const parsed = schema.safeParse(wire);
    if (!parsed.success) throw invalidRequest(name, describeZodError(parsed.error));
    return parsed.data;
  }

  /** A consumer that parses a 2xx JSON body with `schema` and maps it; failures are BAD_RESPONSE. */
  private json<S extends z.ZodType, T>(schema: S, map: (wire: z.output<S>) => T): Consume<T> {
    return async (response, context) => {
      const text = await response.body.text();
      const json = parseJsonOrUndefined(text);
      if (json === undefined) {
        throw new PayflowBadResponseError(context.errorInit, 'the body is not JSON');
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        throw new PayflowBadResponseError(
          context.errorInit,
          `the body does not match the schema: ${describeZodError(parsed.error)}`,
        );
      }
      try {
        return map(parsed.data);
      } catch (error) {
        throw new PayflowBadResponseError(
          { ...context.errorInit, cause: error },
          error instanceof Error ? error.message : 'cannot map the body',
        );
      }
    };
  }

  private async streamCsv(
    response: Dispatcher.ResponseData,
    context: AttemptContext,
  ): Promise<SettlementCsv> {
    const contentType = headerValue(response.headers['content-type']) ?? '';
    if (!/^text\/csv\b/i.test(contentType)) {
      await response.body.dump();
      throw new PayflowBadResponseError(
        context.errorInit,
        `content type ${contentType || '(none)'} is not text/csv`,
      );
    }
    const source = response.body;
    const body = new PassThrough();
    source.on('error', (error: unknown) => {
      body.destroy(
        error instanceof PayflowError
          ? error
          : errorForTransport(error, {
              endpoint: context.errorInit.endpoint,
              method: context.errorInit.method,
              requestSent: true,
              status: context.status,
              abortedBy: undefined,
              attempt: context.attempt,
            }),
      );
    });
    // A consumer that gives up early releases the connection.
    body.on('close', () => {
      if (!source.readableEnded) source.destroy();
    });
    source.pipe(body);
    return { contentType, body, text: () => readAll(body) };
  }

  // ============================================================ internals: the retry loop

  private async execute<T>(call: HttpCall, consume: Consume<T>): Promise<T> {
    const { endpoint: def } = call;
    let attempt = 1;
    let refreshedAfter401 = false;
    for (;;) {
      await this.waitForGate(call);
      let token: CachedToken | undefined;
      let authorization: string;
      if (call.auth === 'basic') {
        authorization = this.basicAuthorization;
      } else {
        token = await this.bearerToken(call);
        authorization = `Bearer ${token.accessToken}`;
      }
      const slots = this.slotsOf(call.base.origin);
      await this.takeSlot(slots, call);
      if (this.notBefore > performance.now()) {
        // A 429 closed the gate while this call waited for a slot: wait again.
        slots.release();
        continue;
      }
      let released = false;
      try {
        // A call with a body runs the hook inside the exchange, on its connection (gatedBody).
        if (call.auth === 'bearer' && call.body === undefined) await this.runSendHook(call);
        return await this.exchange(call, authorization, attempt, consume);
      } catch (error) {
        if (!(error instanceof PayflowError)) throw error;
        if (error.status === 401 && token !== undefined && !refreshedAfter401) {
          // The token is dead (expired early, revoked): one fresh token, then a 401 is final.
          refreshedAfter401 = true;
          this.tokens.invalidate(token.accessToken);
          continue;
        }
        const retryable =
          error.transient &&
          error.code !== 'PAYFLOW.ABORTED' &&
          def.idempotent &&
          attempt < this.settings.maxAttempts;
        if (!retryable) throw error;
        const delay = retryDelayMs(attempt, error.retryAfterMs, this.settings, this.random);
        if (delay === undefined) throw error;
        slots.release();
        released = true;
        await this.pause(delay, call, error);
        attempt += 1;
      } finally {
        if (!released) slots.release();
      }
    }
  }

  private slotsOf(origin: string): Slots {
    let slots = this.slots.get(origin);
    if (slots === undefined) {
      slots = new Slots(this.connections);
      this.slots.set(origin, slots);
    }
    return slots;
  }

  /** Waits for a connection slot of the origin; aborts like the gate (nothing sent). */
  private async takeSlot(slots: Slots, call: HttpCall): Promise<void> {
    if (slots.tryTake()) return;
    const signal = call.signal
      ? AbortSignal.any([call.signal, this.closeController.signal])
      : this.closeController.signal;
    try {
      await slots.take(signal);
    } catch {
      throw this.abortedBeforeSending(
        call,
        this.closeController.signal.aborted ? 'closed' : 'caller',
      );
    }
  }

  /**
   * The caller's "about to send" hook. When it fails (its record could not be written, or
   * the caller no longer owns the call) the request is not sent.
   */
  private async runSendHook(call: HttpCall): Promise<void> {
    const hook = payflowSendHookOf(call.signal);
    if (hook === undefined) return;
    try {
      await hook();
    } catch (error) {
      throw this.hookFailed(call, error);
    }
  }

  private hookFailed(call: HttpCall, error: unknown): PayflowAbortedError {
    return new PayflowAbortedError(
      { endpoint: call.endpoint.name, method: call.endpoint.method, reached: 'no', cause: error },
      'caller',
    );
  }

  /** Waits while a 429's gate is closed. */
  private async waitForGate(call: HttpCall): Promise<void> {
    for (;;) {
      const wait = this.notBefore - performance.now();
      if (this.closeController.signal.aborted) throw this.abortedBeforeSending(call, 'closed');
      if (wait <= 0) return;
      await this.pause(wait, call);
    }
  }

  /** Sleeps, ending early (as PAYFLOW.ABORTED) when the caller aborts or the client closes. */
  private async pause(ms: number, call: HttpCall, previous?: PayflowError): Promise<void> {
    const signal = call.signal
      ? AbortSignal.any([call.signal, this.closeController.signal])
      : this.closeController.signal;
    try {
      await sleep(ms, signal);
    } catch {
      const reason = this.closeController.signal.aborted ? 'closed' : 'caller';
      if (previous === undefined) throw this.abortedBeforeSending(call, reason);
      throw new PayflowAbortedError(
        {
          endpoint: call.endpoint.name,
          method: call.endpoint.method,
          reached: previous.reached,
          status: previous.status,
          attempt: previous.attempt,
          cause: previous,
        },
        reason,
      );
    }
  }

  private abortedBeforeSending(call: HttpCall, reason: 'caller' | 'closed'): PayflowAbortedError {
    return new PayflowAbortedError(
      { endpoint: call.endpoint.name, method: call.endpoint.method, reached: 'no' },
      reason,
    );
  }

  /** The cached token (single flight); a token failure is re-attributed to this call, unsent. */
  private async bearerToken(call: HttpCall): Promise<CachedToken> {
    // The common case: a cached token, nothing to wait for (no composite signal, no race).
    const cached = this.tokens.peek();
    if (cached !== undefined && call.signal?.aborted !== true) {
      if (this.closeController.signal.aborted) throw this.abortedBeforeSending(call, 'closed');
      return cached;
    }
    const signal = call.signal
      ? AbortSignal.any([call.signal, this.closeController.signal])
      : this.closeController.signal;
    if (signal.aborted) {
      throw this.abortedBeforeSending(
        call,
        this.closeController.signal.aborted ? 'closed' : 'caller',
      );
    }
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => undefined);
    try {
      return await Promise.race([this.tokens.get(), aborted]);
    } catch (error) {
      if (error instanceof PayflowError) {
        throw error.withContext({
          endpoint: call.endpoint.name,
          method: call.endpoint.method,
          reached: 'no',
          status: error.status,
          payflowCode: error.payflowCode,
          retryAfterMs: error.retryAfterMs,
          stage: 'token',
          attempt: error.attempt,
          cause: error,
        });
      }
      if (signal.aborted) {
        throw this.abortedBeforeSending(
          call,
          this.closeController.signal.aborted ? 'closed' : 'caller',
        );
      }
      throw error;
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  private async fetchToken(): Promise<FetchedToken> {
    const token = await this.requestToken(this.settings.scopes, undefined);
    return {
      accessToken: token.access_token,
      expiresInSeconds: tokenLifetimeSeconds(token.expires_in),
    };
  }

  private async requestToken(
    scopes: readonly string[] | undefined,
    signal: AbortSignal | undefined,
  ): Promise<z.output<typeof tokenResponseSchema>> {
    const form = this.prepare('token', tokenRequestSchema, () => ({
      grant_type: 'client_credentials',
      ...(scopes !== undefined && scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
    }));
    const body = new URLSearchParams(form).toString();
    return this.execute(
      {
        endpoint: PAYFLOW_ENDPOINTS.token,
        base: this.tokenBase,
        path: this.tokenPath,
        body,
        contentType: 'application/x-www-form-urlencoded',
        accept: 'application/json',
        signal,
        auth: 'basic',
      },
      this.json(tokenResponseSchema, (wire) => wire),
    );
  }

  // ============================================================ internals: one exchange

  /** One HTTP exchange: send, read the status, consume a 2xx or turn anything else into an error. */
  private async exchange<T>(
    call: HttpCall,
    authorization: string,
    attempt: number,
    consume: Consume<T>,
  ): Promise<T> {
    const { endpoint: def } = call;
    const requestId = randomUUID();
    const tracker = { sent: false };
    this.sent.set(requestId, tracker);
    // One controller for the deadline and the caller's signal (cheaper than AbortSignal.any,
    // which this hot path would call for every request).
    const controller = new AbortController();
    let deadlineExceeded = false;
    const timer = setTimeout(() => {
      deadlineExceeded = true;
      controller.abort(new DeadlineExceeded());
    }, this.settings.requestTimeoutMs);
    const caller = call.signal;
    const onCallerAbort = (): void => controller.abort(caller?.reason);
    if (caller?.aborted === true) controller.abort(caller.reason);
    else caller?.addEventListener('abort', onCallerAbort, { once: true });
    const signal = controller.signal;
    const headers: Record<string, string> = {
      authorization,
      accept: call.accept,
      'user-agent': this.settings.userAgent,
      [REQUEST_ID_HEADER]: requestId,
    };
    if (call.contentType !== undefined) headers['content-type'] = call.contentType;
    if (call.organizationId !== undefined) headers['x-organization-id'] = call.organizationId;
    const hook = call.auth === 'bearer' ? payflowSendHookOf(call.signal) : undefined;
    const gate: BodyGate = { state: 'none', failure: undefined };
    let body: string | Buffer | Readable | null = call.body ?? null;
    if (hook !== undefined && call.body !== undefined) {
      const bytes = typeof call.body === 'string' ? Buffer.from(call.body, 'utf8') : call.body;
      headers['content-length'] = String(bytes.length);
      gate.state = 'waiting';
      body = Readable.from(gatedBody(bytes, hook, gate, signal), { objectMode: false });
    }

    const started = performance.now();
    let status: number | undefined;
    let outcome = 'ok';
    try {
      const response = await this.agent.request({
        origin: call.base.origin,
        path: `${call.base.prefix}${call.path}`,
        method: def.method,
        headers,
        body,
        signal,
        headersTimeout: this.settings.requestTimeoutMs,
        bodyTimeout: this.settings.requestTimeoutMs,
      });
      status = response.statusCode;
      if (status >= 200 && status < 300) {
        return await consume(response, {
          attempt,
          status,
          errorInit: {
            endpoint: def.name,
            method: def.method,
            status,
            reached: 'yes',
            attempt,
          },
        });
      }
      const text = await readLimited(response.body, ERROR_BODY_LIMIT);
      const retryAfterMs = parseRetryAfter(response.headers['retry-after'], Date.now());
      if (status === 429) this.closeGate(retryAfterMs);
      throw errorForStatus({
        endpoint: def.name,
        method: def.method,
        status,
        body: parseJsonOrUndefined(text),
        retryAfterMs,
        attempt,
      });
    } catch (error) {
      if (gate.state === 'failed') {
        // The hook refused: the body (the whole request, see gatedBody) was never written.
        const notSent = this.hookFailed(call, gate.failure);
        outcome = notSent.code;
        throw notSent;
      }
      // undici announces the head before a stream body is read; while the hook still ran
      // (a deadline or the caller aborted meanwhile) nothing of the request was written.
      const written = gate.state === 'none' || gate.state === 'passed' ? tracker.sent : false;
      const failure =
        error instanceof PayflowError
          ? error
          : errorForTransport(error, {
              endpoint: def.name,
              method: def.method,
              requestSent: written,
              status,
              abortedBy: deadlineExceeded
                ? 'deadline'
                : call.signal?.aborted
                  ? 'caller'
                  : undefined,
              attempt,
            });
      outcome = failure.code;
      throw failure;
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
      this.sent.delete(requestId);
      this.report({
        endpoint: def.name,
        method: def.method,
        status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        attempt,
        outcome,
      });
    }
  }

  /** A 429: no request leaves this client before Retry-After (capped) has passed. */
  private closeGate(retryAfterMs: number | undefined): void {
    const delay = Math.min(
      retryAfterMs ?? this.settings.defaultRateLimitDelayMs,
      this.settings.maxRetryAfterMs,
    );
    this.notBefore = Math.max(this.notBefore, performance.now() + delay);
    this.logger.debug({ delayMs: delay }, 'payflow rate limit: holding calls');
  }

  private report(event: PayflowCallEvent): void {
    if (this.logger.isLevelEnabled('debug')) {
      this.logger.debug(
        {
          endpoint: event.endpoint,
          method: event.method,
          status: event.status,
          durationMs: event.durationMs,
          attempt: event.attempt,
          outcome: event.outcome,
        },
        'payflow call',
      );
    }
    if (this.onCall !== undefined) {
      try {
        this.onCall(event);
      } catch (error) {
        this.logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'payflow onCall hook threw',
        );
      }
    }
  }

  /** undici publishes each request head just before writing it to the socket. */
  private readonly onSendHeaders = (message: unknown): void => {
    if (this.sent.size === 0) return;
    const head = (message as { headers?: unknown } | null)?.headers;
    if (typeof head !== 'string') return;
    const id = REQUEST_ID_IN_HEAD.exec(head)?.[1];
    if (id === undefined) return;
    const tracker = this.sent.get(id.toLowerCase());
    if (tracker !== undefined) tracker.sent = true;
  };
}

interface BodyGate {
  /** none: not gated; waiting: the hook runs; passed: the body is written; failed: refused. */
  state: 'none' | 'waiting' | 'passed' | 'failed';
  failure: unknown;
}

/**
 * A request body that runs the send hook first. undici asks for it once the request has its
 * connection and writes the request head together with the first chunk, so the hook's commit
 * (`sent_at`) and the write are one chain of microtasks apart: a crash between them, which
 * would leave a call "sent" that never left, is nearly impossible. When the hook fails the
 * body throws, undici destroys the socket, and nothing of the request was written.
 */
async function* gatedBody(
  bytes: Buffer,
  hook: () => Promise<void>,
  gate: BodyGate,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  try {
    await hook();
  } catch (error) {
    gate.state = 'failed';
    gate.failure = error ?? new Error('send hook failed');
    throw gate.failure;
  }
  // Aborted (deadline, caller) while the hook ran: undici has already given the request up,
  // and nothing may be written. Checked right before the chunk goes out, with no wait between.
  if (signal.aborted) return;
  gate.state = 'passed';
  yield bytes;
}

/** A counting semaphore whose waiters can give up (abort) without taking a slot. */
class Slots {
  private readonly waiters: (() => void)[] = [];

  constructor(private free: number) {}

  tryTake(): boolean {
    if (this.free <= 0) return false;
    this.free--;
    return true;
  }

  take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(new Error('aborted'));
    return new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const index = this.waiters.indexOf(grant);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(new Error('aborted'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(grant);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    if (next === undefined) this.free++;
    else next();
  }
}
