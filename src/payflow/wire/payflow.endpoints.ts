/**
 * Payflow's 18 endpoints, one entry each: method, path, how the call's input becomes the
 * request (validated with the shared zod schema, amounts mapped to major units) and how the
 * answer is read (its schema, lenient where the spec types `any` or shows nothing, mapped to
 * the client's domain types). Everything else, from the token to the retry, is the same for
 * all of them (payflow.client.ts, payflow.transport.ts).
 *
 * `{name}` in a path is the input's field of that name: a non-empty string, URL-encoded.
 * Only GET, PUT and the token request are idempotent, so only they are retried in the client.
 */
import type { z } from 'zod';
import type { EndpointIdentity, HttpMethod } from '../http/payflow.call.js';
import * as mapping from './payflow.mapping.js';
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
  type CancelPaymentResponse,
  type UnshownInstallmentRecord,
} from './payflow.schemas.js';
import type {
  CallOptions,
  CreatePaymentInput,
  CurrencyCallOptions,
  MarkPaidInput,
  OptionalCurrencyCallOptions,
  PayflowEndpointName,
  PrintReceiptInput,
  ResendInput,
  SettlementCsvQuery,
  UploadDocumentInput,
} from '../payflow.types.js';
import {
  csvStream,
  documentBody,
  formEncoded,
  jsonBody,
  reply,
  type Decoder,
  type Encoder,
} from './payflow.wire.js';

/** Where an endpoint lives: group A ({base_url}), group B ({partner_base_url}), the token URL. */
export type EndpointBase = 'A' | 'B' | 'token';

export interface Endpoint<In, O extends CallOptions, Out> extends EndpointIdentity {
  readonly base: EndpointBase;
  /** Below the base; `{field}` is filled from the input. */
  readonly path: string;
  /** `basic`: the client's own credentials (the token request); `bearer`: the access token. */
  readonly auth: 'basic' | 'bearer';
  readonly accept: string;
  readonly encode?: Encoder<In, O>;
  readonly decode: Decoder<In, O, Out>;
}

type PathParams<P extends string> = P extends `${string}{${infer K}}${infer Rest}`
  ? K | PathParams<Rest>
  : never;
/** The input fields a path template needs. */
type PathArgs<P extends string> = { readonly [K in PathParams<P>]: string };

interface EndpointParts<In, O, Out> {
  readonly encode?: Encoder<In, O>;
  readonly decode: Decoder<In, O, Out>;
  readonly accept?: string;
}

/** One entry; the input's type is what the encoder and decoder read plus the path's fields. */
function endpoint<P extends string, In, O extends CallOptions, Out>(
  name: PayflowEndpointName,
  method: HttpMethod,
  base: EndpointBase,
  path: P,
  parts: EndpointParts<In & PathArgs<P>, O, Out>,
): Endpoint<In & PathArgs<P>, O, Out> {
  const token = name === 'token';
  return {
    name,
    method,
    base,
    path,
    idempotent: token || method === 'GET' || method === 'PUT',
    auth: token ? 'basic' : 'bearer',
    accept: parts.accept ?? 'application/json',
    encode: parts.encode,
    decode: parts.decode,
  };
}

const INSTALLMENT = '/api/payments/{paymentId}/installments/{installmentId}';

/** An installment record; its amounts are in the payment's currency, which it omits. */
const installmentReply = (schema: z.ZodType<UnshownInstallmentRecord>) =>
  reply(schema, (wire, _in, options: CurrencyCallOptions) =>
    mapping.fromWireInstallment(wire, options.currency),
  );
/** A payment's status; its own currency wins over the caller's. */
const statusReply = (schema: z.ZodType<CancelPaymentResponse>) =>
  reply(schema, (wire, _in, options: OptionalCurrencyCallOptions) =>
    mapping.fromWirePaymentStatus(wire, options.currency),
  );

/** An installment's body: the input's `input`, its amounts in the caller's currency. */
const installmentBody = <S extends z.ZodType, Input>(
  schema: S,
  toWire: (input: Input, currency: string) => unknown,
) =>
  jsonBody(schema, (call: { readonly input: Input }, options: CurrencyCallOptions) =>
    toWire(call.input, options.currency),
  );

export const PAYFLOW_ENDPOINTS = {
  // ---------------------------------------------------------------- group A: payments
  createPayment: endpoint('createPayment', 'POST', 'A', '/api/payments', {
    encode: jsonBody(createPaymentSchema, mapping.toWireCreatePayment),
    decode: reply(createPaymentResponseSchema, (wire, input: CreatePaymentInput) =>
      mapping.fromWireCreatePayment(wire, input.payment.currency),
    ),
  }),
  cancelPayment: endpoint('cancelPayment', 'DELETE', 'A', '/api/payments/{paymentId}', {
    decode: statusReply(cancelPaymentResponseSchema),
  }),
  getPaymentStatus: endpoint(
    'getPaymentStatus',
    'GET',
    'A',
    '/api/payments/{paymentId}/paymentStatus',
    { decode: statusReply(paymentStatusResponseSchema) },
  ),
  refund: endpoint('refund', 'POST', 'A', '/api/refund', {
    encode: jsonBody(refundSchema, mapping.toWireRefund),
    decode: reply(refundResponseSchema, mapping.fromWireRefund),
  }),
  createInstallment: endpoint(
    'createInstallment',
    'POST',
    'A',
    '/api/payments/{paymentId}/installments/create',
    {
      encode: installmentBody(createInstallmentSchema, mapping.toWireCreateInstallment),
      decode: installmentReply(installmentRecordSchema),
    },
  ),
  getInstallment: endpoint('getInstallment', 'GET', 'A', INSTALLMENT, {
    decode: installmentReply(installmentRecordSchema),
  }),
  updateInstallment: endpoint('updateInstallment', 'PUT', 'A', INSTALLMENT, {
    encode: installmentBody(updateInstallmentSchema, mapping.toWireUpdateInstallment),
    decode: installmentReply(unshownInstallmentRecordSchema),
  }),
  deleteInstallment: endpoint('deleteInstallment', 'DELETE', 'A', INSTALLMENT, {
    decode: installmentReply(unshownInstallmentRecordSchema),
  }),
  uploadDocument: endpoint('uploadDocument', 'POST', 'A', '/api/payments/uploadDocument', {
    encode: documentBody(uploadDocumentSchema),
    decode: reply(documentSchema, (wire, sent: UploadDocumentInput) =>
      mapping.fromWireDocument(wire, sent, Buffer.byteLength(sent.contentBase64, 'base64')),
    ),
  }),
  deleteDocument: endpoint(
    'deleteDocument',
    'DELETE',
    'A',
    '/api/payments/uploadDocument/{paymentId}/{documentId}',
    { decode: reply(deleteDocumentResponseSchema, (wire) => wire) },
  ),

  // ---------------------------------------------------------------- group B: partner
  token: endpoint('token', 'POST', 'token', '', {
    encode: formEncoded(
      'body',
      tokenRequestSchema,
      (input: { scopes: readonly string[] | undefined }) => ({
        grant_type: 'client_credentials',
        ...(input.scopes !== undefined && input.scopes.length > 0
          ? { scope: input.scopes.join(' ') }
          : {}),
      }),
    ),
    decode: reply(tokenResponseSchema, (wire) => wire),
  }),
  ping: endpoint('ping', 'GET', 'B', '/auth/ping', {
    decode: reply(pingResponseSchema, (wire) => wire),
  }),
  listOrganizations: endpoint('listOrganizations', 'GET', 'B', '/auth/organizations', {
    decode: reply(organizationsResponseSchema, (wire) => wire.organizations),
  }),
  listPaymentMethods: endpoint('listPaymentMethods', 'GET', 'B', '/payment-methods', {
    decode: reply(paymentMethodsResponseSchema, (wire) => wire.paymentMethods),
  }),
  resendPayment: endpoint('resendPayment', 'POST', 'B', '/payment-methods/resend', {
    encode: jsonBody(resendSchema, (input: ResendInput) => input),
    decode: reply(resendResponseSchema, (wire) => wire),
  }),
  printTerminalReceipt: endpoint(
    'printTerminalReceipt',
    'POST',
    'B',
    '/payments/{paymentId}/receipts/terminal/print',
    {
      encode: jsonBody(printReceiptSchema, (input: { body: PrintReceiptInput }) => input.body),
      decode: reply(printReceiptResponseSchema, (wire) => wire),
    },
  ),
  markPaid: endpoint('markPaid', 'POST', 'B', '/payments/{paymentId}/manual-paid', {
    encode: jsonBody(manualPaidSchema, (input: { body: MarkPaidInput }) => input.body),
    decode: reply(manualPaidResponseSchema, (wire) => wire),
  }),
  generateSettlementCsv: endpoint(
    'generateSettlementCsv',
    'GET',
    'B',
    '/settlements/generate_csv',
    {
      encode: formEncoded('query', settlementQuerySchema, (input: SettlementCsvQuery) => input),
      decode: csvStream,
      accept: 'text/csv',
    },
  ),
} satisfies Readonly<Record<PayflowEndpointName, EndpointIdentity>>;
