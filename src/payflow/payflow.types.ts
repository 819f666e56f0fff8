/**
 * The client's domain types: what the rest of payflow-bridge sees of Payflow.
 *
 * Every amount here is an integer count of the currency's minor units, in a field named like
 * the wire field with a `Minor` suffix (`totalGrossAmount` → `totalGrossAmountMinor`). The
 * client converts to and from Payflow's JSON numbers at its edge (payflow.mapping.ts).
 * Non-money numbers (quantity, taxRate, discountRate) are the same on both sides.
 *
 * Each result also carries `raw`: the response as parsed from the wire (major-unit amounts,
 * unknown fields kept), for diagnostics and for fields this client does not model yet.
 */
import type { Readable } from 'node:stream';
import type { PayflowCallTracer, PayflowTraceHeaders } from './payflow-trace.js';
import type { PayflowSendHook } from './payflow-send-hook.js';
import type { z } from 'zod';
import type {
  CancelPaymentResponse,
  CreatePaymentResponse,
  DocumentRecord,
  ManualPaidResponse,
  PaymentMethod,
  PingResponse,
  PrintReceiptResponse,
  RefundResponse,
  ResendBody,
  ResendResponse,
  SettlementQuery,
  UnshownInstallmentRecord,
  UploadDocumentBody,
  createPaymentSchema,
  deleteDocumentResponseSchema,
  organizationsResponseSchema,
} from './wire/payflow.schemas.js';
import type { SecretString } from './auth/payflow.secret-string.js';

export { SecretString } from './auth/payflow.secret-string.js';

// ---------------------------------------------------------------- calls

/** Per-call options accepted by every endpoint. */
export interface CallOptions {
  /** Sent as `X-Organization-Id` (needed when the client belongs to several organizations). */
  readonly organizationId?: string;
  /** Aborts the call, including any wait for the rate-limit gate or a retry back-off. */
  readonly signal?: AbortSignal;
  /** W3C trace headers to send (payflow-trace.ts). */
  readonly trace?: PayflowTraceHeaders;
  /**
   * Runs immediately before the request is written, after the 429 gate, the token and a
   * connection slot; a request whose hook failed is not sent (payflow-send-hook.ts). Not
   * run for the token request.
   */
  readonly onSend?: PayflowSendHook;
}

/**
 * For endpoints whose response has no currency field (installment records): the caller
 * names the payment's currency, which the bridge always knows.
 */
export interface CurrencyCallOptions extends CallOptions {
  readonly currency: string;
}

/** For endpoints whose response usually carries the currency; `currency` is the fallback. */
export interface OptionalCurrencyCallOptions extends CallOptions {
  readonly currency?: string;
}

// ---------------------------------------------------------------- money-bearing inputs

export interface PaymentItemInput {
  readonly description: string;
  readonly grossUnitPriceMinor?: number;
  readonly netUnitPriceMinor?: number;
  /** When set, Payflow uses it instead of grossUnitPrice × quantity. */
  readonly grossTotalPriceMinor?: number | null;
  /** When set, Payflow uses it instead of netUnitPrice × quantity. */
  readonly netTotalPriceMinor?: number | null;
  readonly vatAmountMinor?: number;
  readonly quantity?: number;
  /** Percent, e.g. 25 or 20.9. */
  readonly taxRate?: number;
  readonly discountRate?: number;
  readonly lineType?: 'regular' | 'shipping' | 'part-sum';
}

export interface InstallmentInput {
  /** YYYY-MM-DD */
  readonly date: string;
  readonly grossAmountMinor: number;
  readonly items?: readonly PaymentItemInput[];
}

/** PUT …/installments/{id}: any of the fields, at least one. */
export interface UpdateInstallmentInput {
  readonly date?: string;
  readonly grossAmountMinor?: number;
  readonly items?: readonly PaymentItemInput[];
}

type CreatePaymentWireInput = z.input<typeof createPaymentSchema>;

export interface PaymentInput {
  /** ISO 4217; required here (the wire field is optional, the bridge always sends it). */
  readonly currency: string;
  readonly totalGrossAmountMinor: number;
  readonly totalNetAmountMinor: number;
  readonly installments?: readonly InstallmentInput[] | null;
  readonly installmentsMode?: string | null;
  readonly items?: readonly PaymentItemInput[];
  /** YYYY-MM-DD */
  readonly dueDate: string;
  readonly paymentRef?: string;
  readonly invoiceNumber?: string;
  readonly customerReference?: string;
  readonly invoiceComments?: string | null;
  readonly profileId?: string | null;
  readonly paymentDepartment?: string | null;
  readonly internalRef?: string;
  readonly externalRef?: string;
}

/** POST /api/payments: the wire body with the `payment` object in minor units. */
export type CreatePaymentInput = Omit<CreatePaymentWireInput, 'payment'> & {
  readonly payment: PaymentInput;
};

export interface RefundLineInput {
  readonly description: string;
  readonly grossUnitPriceMinor: number;
  readonly netUnitPriceMinor: number;
  readonly quantity: number;
  readonly vatAmountMinor: number;
  readonly taxRate: number;
}

/** POST /api/refund. `paymentId` is sent as `crossPayment` (docs/assumptions.md). */
export interface RefundInput {
  readonly paymentId: string;
  readonly currency: string;
  readonly totalGrossAmountMinor: number;
  readonly totalNetAmountMinor: number;
  readonly invoiceLines?: readonly RefundLineInput[];
}

export type UploadDocumentInput = UploadDocumentBody;
export type ResendInput = ResendBody;

export interface PrintReceiptInput {
  readonly terminalId?: string;
}

export interface MarkPaidInput {
  readonly note?: string;
}

export type SettlementCsvQuery = SettlementQuery;

/** One of the four installment endpoints, named by `action`, with what it needs. */
export type InstallmentRequest =
  | { readonly action: 'create'; readonly paymentId: string; readonly input: InstallmentInput }
  | ({ readonly action: 'get' | 'delete' } & InstallmentRef)
  | ({ readonly action: 'update'; readonly input: UpdateInstallmentInput } & InstallmentRef);
interface InstallmentRef {
  readonly paymentId: string;
  readonly installmentId: string;
}

// ---------------------------------------------------------------- outputs

export interface Installment {
  readonly id: string;
  readonly date: string;
  /** `initial` or `scheduled`, kept raw. */
  readonly type: string;
  /** Raw installment status (CREATED, SENT, …, or a value outside the spec's list). */
  readonly status: string;
  readonly currency: string;
  readonly grossAmountMinor: number;
  readonly numTried: number;
  readonly numFailed: number;
  /** ISO 8601 UTC text (`…T10:00:00.000Z`) whatever shape Payflow sent it in, or null. */
  readonly successfullyChargedAt: string | null;
  /** ISO 8601 UTC text whatever shape Payflow sent it in, or null. */
  readonly lastFailedAt: string | null;
  readonly raw: UnshownInstallmentRecord;
}

export interface CreatedPayment {
  readonly id: string;
  /** `_links.longGui`: the full payment link (the one clients use). */
  readonly paymentLink: string | undefined;
  readonly currency: string;
  /** Null when the request had no installments. */
  readonly installments: readonly Installment[] | null;
  readonly raw: CreatePaymentResponse;
}

export interface PaymentStatus {
  readonly paymentId: string;
  readonly paymentNumber: number;
  /** Raw `paymentStatus.paymentStatus` (DRAFT … UNKNOWN, PAID, or anything else Payflow sends). */
  readonly status: string;
  readonly currency: string;
  readonly totalAmountMinor: number;
  readonly installments: readonly Installment[];
  readonly merchantId: string;
  readonly createdAt: string;
  /** `YYYY-MM-DD` whatever shape Payflow sent it in (docs/assumptions.md), or null. */
  readonly dueDate: string | null;
  /** Item fields are not shown by the spec: only `id` is sure to be there. */
  readonly files: readonly PaymentFile[];
  readonly raw: CancelPaymentResponse;
}

/** An item of the payment status's `files[]`, as read (unknown fields kept). */
export type PaymentFile = DocumentRecord;

/** POST /api/payments/uploadDocument, completed from the upload where the answer is silent. */
export interface PayflowDocument {
  readonly id: string;
  readonly paymentId: string;
  readonly fileName: string;
  readonly contentType: string;
  /** Bytes, as Payflow counted them, else the size of the content sent. */
  readonly size: number;
  /** ISO 8601 UTC text, or null when Payflow did not say. */
  readonly uploadedAt: string | null;
  readonly raw: DocumentRecord;
}

export interface RefundResult {
  readonly refundId: string;
  readonly refundType: string;
  readonly debtorAccountNumber: string;
  /** `originalCurrency`: the currency of every amount below. */
  readonly currency: string;
  readonly originalAmountMinor: number;
  readonly grossRefundedAmountMinor: number;
  readonly netRefundedAmountMinor: number;
  readonly remainingAmountMinor: number | null;
  readonly raw: RefundResponse;
}

export type DeletedDocument = z.infer<typeof deleteDocumentResponseSchema>;
export type Organization = z.infer<typeof organizationsResponseSchema>['organizations'][number];
export type {
  ManualPaidResponse,
  PaymentMethod,
  PingResponse,
  PrintReceiptResponse,
  ResendResponse,
};

/** POST /auth/token, as issued (not cached: the client's own token cache is separate). */
export interface IssuedToken {
  readonly accessToken: SecretString;
  readonly tokenType: string;
  readonly expiresInSeconds: number;
  readonly scopes: readonly string[];
}

/**
 * GET /settlements/generate_csv. `body` streams the file: read it to the end or destroy it
 * (until then it holds a pooled connection). Transport failures while streaming surface as
 * a PayflowError on the stream.
 */
export interface SettlementCsv {
  readonly contentType: string;
  readonly body: Readable;
  /** Reads the whole body as UTF-8 text (for small ranges only). */
  text(): Promise<string>;
}

// ---------------------------------------------------------------- the API

/** Stable names of Payflow's 18 endpoints, used in errors, logs and metrics. */
export type PayflowEndpointName =
  | 'createPayment'
  | 'uploadDocument'
  | 'deleteDocument'
  | 'cancelPayment'
  | 'refund'
  | 'getPaymentStatus'
  | 'createInstallment'
  | 'getInstallment'
  | 'updateInstallment'
  | 'deleteInstallment'
  | 'token'
  | 'ping'
  | 'listOrganizations'
  | 'generateSettlementCsv'
  | 'listPaymentMethods'
  | 'resendPayment'
  | 'printTerminalReceipt'
  | 'markPaid';

/**
 * What the rest of payflow-bridge depends on. Every method throws a PayflowError
 * (payflow.errors.ts) on failure. GET and PUT calls are retried inside on transient
 * failures; POST and DELETE calls never are: the caller decides, using `error.reached`.
 */
export interface PayflowApi {
  // group A: payment management
  /** POST /api/payments */
  createPayment(input: CreatePaymentInput, options?: CallOptions): Promise<CreatedPayment>;
  /** DELETE /api/payments/{payflow_id}: cancels; answers the status after cancelling. */
  cancelPayment(paymentId: string, options?: OptionalCurrencyCallOptions): Promise<PaymentStatus>;
  /** GET /api/payments/{payflow_id}/paymentStatus */
  getPaymentStatus(
    paymentId: string,
    options?: OptionalCurrencyCallOptions,
  ): Promise<PaymentStatus>;
  /** POST /api/refund */
  refund(input: RefundInput, options?: CallOptions): Promise<RefundResult>;
  /**
   * The installment endpoints, by `request.action`: create (POST
   * …/{payflow_id}/installments/create), get (GET), update (PUT) or delete (DELETE)
   * …/{payflow_id}/installments/{installment_id}. Answers the installment as Payflow has it.
   */
  installment(request: InstallmentRequest, options: CurrencyCallOptions): Promise<Installment>;
  /** POST /api/payments/uploadDocument */
  uploadDocument(input: UploadDocumentInput, options?: CallOptions): Promise<PayflowDocument>;
  /** DELETE /api/payments/uploadDocument/{payflow_id}/{document_id} */
  deleteDocument(
    paymentId: string,
    documentId: string,
    options?: CallOptions,
  ): Promise<DeletedDocument>;

  // group B: partner
  /** POST /auth/token: issues a fresh token (bypasses and does not touch the client's cache). */
  issueToken(options?: {
    readonly scopes?: readonly string[];
    readonly signal?: AbortSignal;
  }): Promise<IssuedToken>;
  /** GET /auth/ping */
  ping(options?: CallOptions): Promise<PingResponse>;
  /** GET /auth/organizations */
  listOrganizations(options?: CallOptions): Promise<readonly Organization[]>;
  /** GET /payment-methods */
  listPaymentMethods(options?: CallOptions): Promise<readonly PaymentMethod[]>;
  /** POST /payment-methods/resend */
  resendPayment(input: ResendInput, options?: CallOptions): Promise<ResendResponse>;
  /** POST /payments/{payment_id}/receipts/terminal/print */
  printTerminalReceipt(
    paymentId: string,
    input?: PrintReceiptInput,
    options?: CallOptions,
  ): Promise<PrintReceiptResponse>;
  /** POST /payments/{payment_id}/manual-paid */
  markPaid(
    paymentId: string,
    input?: MarkPaidInput,
    options?: CallOptions,
  ): Promise<ManualPaidResponse>;
  /** GET /settlements/generate_csv, streamed. */
  generateSettlementCsv(query: SettlementCsvQuery, options?: CallOptions): Promise<SettlementCsv>;
  /** GET /settlements/generate_csv, read whole as text (small ranges). */
  generateSettlementCsvText(query: SettlementCsvQuery, options?: CallOptions): Promise<string>;
}

// ---------------------------------------------------------------- client options

/** One HTTP exchange with Payflow (one attempt), for metrics. */
export interface PayflowCallEvent {
  readonly endpoint: PayflowEndpointName;
  readonly method: string;
  /** HTTP status, absent when no answer came. */
  readonly status: number | undefined;
  readonly durationMs: number;
  /** 1-based attempt number within the call. */
  readonly attempt: number;
  /** `ok`, or the PayflowError code of the failure (PAYFLOW.…). */
  readonly outcome: string;
}

export interface PayflowClientOptions {
  /** Group A base address ({base_url}). */
  readonly baseUrl: string;
  /** Group B base address ({partner_base_url}). */
  readonly partnerBaseUrl: string;
  /** Defaults to `${partnerBaseUrl}/auth/token`. */
  readonly tokenUrl?: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /**
   * The file `clientSecret` was read from (PAYFLOW_CLIENT_SECRET_FILE): read again when the
   * token endpoint answers invalid_client, so that a rotated secret needs no restart.
   */
  readonly clientSecretFile?: string;
  /** Scopes to ask for (space-joined into `scope`); default: none asked, every granted scope. */
  readonly scopes?: readonly string[];
  /** Connections per origin in the pool. Default 64. */
  readonly connections?: number;
  /** TCP (and TLS) connect timeout. Default 5 000 ms. */
  readonly connectTimeoutMs?: number;
  /**
   * Per attempt: the longest wait for the response headers, and for a JSON response the
   * whole exchange; for a streamed CSV the longest silence between body chunks. Default 30 000 ms.
   */
  readonly requestTimeoutMs?: number;
  /** Attempts for idempotent calls (GET, PUT, token), including the first. Default 3. */
  readonly maxAttempts?: number;
  /** Back-off before the first retry; doubles each retry, with jitter. Default 200 ms. */
  readonly retryBaseDelayMs?: number;
  /** Longest back-off between retries. Default 5 000 ms. */
  readonly retryMaxDelayMs?: number;
  /**
   * Cap of the client-wide "not before" gate a 429 sets, and the longest Retry-After the
   * client waits for inside a call (a longer one ends the call). Default 60 000 ms.
   */
  readonly maxRetryAfterMs?: number;
  /** Gate set by a 429 without a usable Retry-After. Default 1 000 ms. */
  readonly defaultRateLimitDelayMs?: number;
  /** Keep-alive of idle pooled connections. Default 30 000 ms. */
  readonly keepAliveTimeoutMs?: number;
  readonly userAgent?: string;
  /** Called after every HTTP exchange (never throws into the client). */
  readonly onCall?: (event: PayflowCallEvent) => void;
  /** Records a client span per call (src/tracing); none: the caller's trace headers only. */
  readonly tracer?: PayflowCallTracer;
  /** Clock of the token cache (tests). Default Date.now. The rate-limit gate uses a monotonic clock. */
  readonly now?: () => number;
  /** Random source in [0, 1) for back-off jitter (tests). Default Math.random. */
  readonly random?: () => number;
  /**
   * How uploadDocument sends the document: `json` (default) `{ paymentId, fileName,
   * contentType, contentBase64 }`, or `multipart` form-data with the fields `paymentId` and
   * `file` (the decoded bytes, with their file name and content type). PAYFLOW_DOCUMENT_UPLOAD.
   */
  readonly documentUpload?: PayflowDocumentUpload;
}

export type PayflowDocumentUpload = 'json' | 'multipart';
