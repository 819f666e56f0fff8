/**
 * PayflowClient: the typed HTTP client of Payflow's 18 endpoints (both groups), the one
 * adapter the rest of payflow-bridge talks to (as `PayflowApi`).
 *
 * Each method is one line: an entry of the endpoint table (payflow.endpoints.ts: method, path,
 * request and response schemas, mapping) and the call's input. What is common to all of them
 * lives below the table:
 *
 * - payflow.auth.ts: OAuth 2.0 client credentials, the cached token, refreshed after a 401;
 *   payflow.client-secret.ts: a secret rotated in its file is read again on invalid_client;
 * - payflow.transport.ts: the undici pool, connection slots, the 429 gate, the caller's send
 *   hook, deadlines, aborts and the retry of idempotent requests;
 * - payflow.errors.ts: every failure is a PayflowError with a stable code.
 *
 * Amounts cross the client as integer minor units (payflow.mapping.ts); fields the spec types
 * `any` or does not show are read in any reasonable shape (payflow.lenient.ts). The client
 * logs one debug line per HTTP exchange (endpoint, method, status, duration); never bodies,
 * tokens, secrets or personal data.
 */
import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { silentLogger, type AppLogger } from '../logging/logger.js';
import { PayflowAuth } from './auth/payflow.auth.js';
import {
  parseBase,
  type Base,
  type Credentials,
  type EndpointIdentity,
  type HttpCall,
} from './http/payflow.call.js';
import { ClientSecret } from './auth/payflow.client-secret.js';
import { PAYFLOW_ENDPOINTS, type Endpoint, type EndpointBase } from './wire/payflow.endpoints.js';
import { PayflowError, PayflowInvalidRequestError } from './payflow.errors.js';
import type { PayflowCallTracer } from './payflow-trace.js';
import { PayflowTransport } from './http/payflow.transport.js';
import type {
  CallOptions,
  CreatePaymentInput,
  CreatedPayment,
  CurrencyCallOptions,
  DeletedDocument,
  Installment,
  InstallmentRequest,
  IssuedToken,
  MarkPaidInput,
  OptionalCurrencyCallOptions,
  Organization,
  PayflowApi,
  PayflowClientOptions,
  PayflowDocument,
  PaymentMethod,
  PaymentStatus,
  PingResponse,
  PrintReceiptInput,
  RefundInput,
  RefundResult,
  ResendInput,
  ResendResponse,
  SettlementCsv,
  SettlementCsvQuery,
  UploadDocumentInput,
} from './payflow.types.js';
import type { EncodeContext, WireRequest } from './wire/payflow.wire.js';

/** Nest injection tokens (see payflow.module.ts). */
export const PAYFLOW_CLIENT_OPTIONS = Symbol('PAYFLOW_CLIENT_OPTIONS');
export const PAYFLOW_LOGGER = Symbol('PAYFLOW_LOGGER');

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
  userAgent: 'payflow-bridge',
} as const;

/** The base address of each endpoint group; the token URL's path is its whole path. */
function basesOf(options: PayflowClientOptions): Readonly<Record<EndpointBase, Base>> {
  const A = parseBase(options.baseUrl, 'baseUrl');
  const B = parseBase(options.partnerBaseUrl, 'partnerBaseUrl');
  const tokenUrl = options.tokenUrl ?? `${options.partnerBaseUrl.replace(/\/+$/, '')}/auth/token`;
  const token = parseBase(tokenUrl, 'tokenUrl');
  return { A, B, token: { origin: token.origin, prefix: token.prefix || '/' } };
}

/** `{field}` of a path template from the input: a non-empty string, URL-encoded. */
function fillPath(template: string, input: unknown): string {
  return template.replace(/\{(\w+)\}/g, (_match, field: string) => {
    const value =
      typeof input === 'object' && input !== null && field in input
        ? (input as Readonly<Record<string, unknown>>)[field]
        : undefined;
    if (typeof value !== 'string' || value.length === 0) {
      throw new Error(`${field} must be a non-empty string`);
    }
    return encodeURIComponent(value);
  });
}

@Injectable()
export class PayflowClient implements PayflowApi, OnApplicationShutdown {
  private readonly bases: Readonly<Record<EndpointBase, Base>>;
  private readonly secret: ClientSecret;
  private readonly transport: PayflowTransport;
  private readonly auth: PayflowAuth;
  private readonly encoding: EncodeContext;
  private readonly tracer: PayflowCallTracer | undefined;

  constructor(
    @Inject(PAYFLOW_CLIENT_OPTIONS) options: PayflowClientOptions,
    @Optional() @Inject(PAYFLOW_LOGGER) logger?: AppLogger,
  ) {
    this.bases = basesOf(options);
    this.secret = new ClientSecret({
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      clientSecretFile: options.clientSecretFile,
      logger: logger ?? silentLogger(),
    });
    this.encoding = { documentUpload: options.documentUpload ?? 'json' };
    this.tracer = options.tracer;
    this.transport = new PayflowTransport({
      connections: options.connections ?? DEFAULTS.connections,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? DEFAULTS.keepAliveTimeoutMs,
      userAgent: options.userAgent ?? DEFAULTS.userAgent,
      logger: logger ?? silentLogger(),
      onCall: options.onCall,
      maxAttempts: Math.max(1, options.maxAttempts ?? DEFAULTS.maxAttempts),
      baseDelayMs: options.retryBaseDelayMs ?? DEFAULTS.retryBaseDelayMs,
      maxDelayMs: options.retryMaxDelayMs ?? DEFAULTS.retryMaxDelayMs,
      maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs,
      defaultRateLimitDelayMs: options.defaultRateLimitDelayMs ?? DEFAULTS.defaultRateLimitDelayMs,
      random: options.random ?? Math.random,
    });
    this.auth = new PayflowAuth(
      { scopes: options.scopes, now: options.now ?? Date.now, closed: this.transport.closed },
      this.secret,
      (scopes, signal, credentials) =>
        this.request(PAYFLOW_ENDPOINTS.token, { scopes }, { signal }, credentials),
    );
  }

  // ============================================================ group A: payments

  createPayment(input: CreatePaymentInput, options: CallOptions = {}): Promise<CreatedPayment> {
    return this.request(PAYFLOW_ENDPOINTS.createPayment, input, options);
  }

  cancelPayment(
    paymentId: string,
    options: OptionalCurrencyCallOptions = {},
  ): Promise<PaymentStatus> {
    return this.request(PAYFLOW_ENDPOINTS.cancelPayment, { paymentId }, options);
  }

  getPaymentStatus(
    paymentId: string,
    options: OptionalCurrencyCallOptions = {},
  ): Promise<PaymentStatus> {
    return this.request(PAYFLOW_ENDPOINTS.getPaymentStatus, { paymentId }, options);
  }

  refund(input: RefundInput, options: CallOptions = {}): Promise<RefundResult> {
    return this.request(PAYFLOW_ENDPOINTS.refund, input, options);
  }

  /** One method for the four installment endpoints: create, get, update and delete. */
  installment(request: InstallmentRequest, options: CurrencyCallOptions): Promise<Installment> {
    switch (request.action) {
      case 'create':
        return this.request(PAYFLOW_ENDPOINTS.createInstallment, request, options);
      case 'get':
        return this.request(PAYFLOW_ENDPOINTS.getInstallment, request, options);
      case 'update':
        return this.request(PAYFLOW_ENDPOINTS.updateInstallment, request, options);
      case 'delete':
        return this.request(PAYFLOW_ENDPOINTS.deleteInstallment, request, options);
    }
  }

  uploadDocument(input: UploadDocumentInput, options: CallOptions = {}): Promise<PayflowDocument> {
    return this.request(PAYFLOW_ENDPOINTS.uploadDocument, input, options);
  }

  deleteDocument(
    paymentId: string,
    documentId: string,
    options: CallOptions = {},
  ): Promise<DeletedDocument> {
    return this.request(PAYFLOW_ENDPOINTS.deleteDocument, { paymentId, documentId }, options);
  }

  // ============================================================ group B: partner

  issueToken(
    options: { readonly scopes?: readonly string[]; readonly signal?: AbortSignal } = {},
  ): Promise<IssuedToken> {
    return this.auth.issue(options.scopes, options.signal);
  }

  ping(options: CallOptions = {}): Promise<PingResponse> {
    return this.request(PAYFLOW_ENDPOINTS.ping, {}, options);
  }

  listOrganizations(options: CallOptions = {}): Promise<readonly Organization[]> {
    return this.request(PAYFLOW_ENDPOINTS.listOrganizations, {}, options);
  }

  listPaymentMethods(options: CallOptions = {}): Promise<readonly PaymentMethod[]> {
    return this.request(PAYFLOW_ENDPOINTS.listPaymentMethods, {}, options);
  }

  resendPayment(input: ResendInput, options: CallOptions = {}): Promise<ResendResponse> {
    return this.request(PAYFLOW_ENDPOINTS.resendPayment, input, options);
  }

  /** Answers PrintReceiptResponse (PayflowApi). */
  printTerminalReceipt(paymentId: string, body: PrintReceiptInput = {}, options: CallOptions = {}) {
    return this.request(PAYFLOW_ENDPOINTS.printTerminalReceipt, { paymentId, body }, options);
  }

  /** Answers ManualPaidResponse (PayflowApi). */
  markPaid(paymentId: string, body: MarkPaidInput = {}, options: CallOptions = {}) {
    return this.request(PAYFLOW_ENDPOINTS.markPaid, { paymentId, body }, options);
  }

  generateSettlementCsv(
    query: SettlementCsvQuery,
    options: CallOptions = {},
  ): Promise<SettlementCsv> {
    return this.request(PAYFLOW_ENDPOINTS.generateSettlementCsv, query, options);
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
    return this.transport.close();
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
    return this.auth.fetchCount;
  }

  /** How many times PAYFLOW_CLIENT_SECRET_FILE was read again after invalid_client (diagnostics). */
  get clientSecretRereadCount(): number {
    return this.secret.rereadCount;
  }

  // ============================================================ one call of any endpoint

  /**
   * Builds the request of `def` from the input (any failure: INVALID_REQUEST, nothing sent)
   * and hands it to the transport. `basic`: the client credentials of a token request
   * (payflow.auth.ts names the secret it tries); default: the current secret.
   */
  private async request<In, O extends CallOptions, Out>(
    def: Endpoint<In, O, Out>,
    input: In,
    options: O,
    basic: Credentials = this.secret.credentials,
  ): Promise<Out> {
    let path: string;
    let wire: WireRequest;
    try {
      path = fillPath(def.path, input);
      wire = def.encode === undefined ? {} : await def.encode(input, options, this.encoding);
    } catch (error) {
      throw this.invalid(def, error instanceof Error ? error.message : 'cannot build the body');
    }
    if (options.organizationId !== undefined && options.organizationId.trim() === '') {
      throw this.invalid(def, 'organizationId must not be empty');
    }
    const parent = options.trace;
    const span = this.tracer?.start(def.name, def.method, parent);
    const call: HttpCall = {
      endpoint: def,
      base: this.bases[def.base],
      path: wire.query === undefined ? path : `${path}?${wire.query}`,
      body: wire.body,
      contentType: wire.contentType,
      accept: def.accept,
      organizationId: options.organizationId,
      signal: options.signal,
      trace: span?.headers ?? parent,
      credentials: def.auth === 'basic' ? basic : this.auth,
      onSend: def.auth === 'bearer' ? options.onSend : undefined,
    };
    const consume = def.decode(input, options);
    if (span === undefined) return this.transport.execute(call, consume);
    // Recorded (an SDK is on): the client span ends with Payflow's status.
    let status: number | undefined;
    try {
      const result = await this.transport.execute(call, (response, context) => {
        status = context.status;
        return consume(response, context);
      });
      span.end(status);
      return result;
    } catch (error) {
      span.end(error instanceof PayflowError ? error.status : status, error);
      throw error;
    }
  }

  private invalid(def: EndpointIdentity, problem: string): PayflowInvalidRequestError {
    return new PayflowInvalidRequestError(
      { endpoint: def.name, method: def.method, reached: 'no' },
      problem,
    );
  }
}
