/**
 * OpenAPI 3.1 description of the sandbox's Payflow surface (the 18 endpoints and the
 * webhook), generated from the shared zod wire schemas with z.toJSONSchema, so the
 * document cannot drift from what the sandbox validates. Served at /sandbox/openapi.json.
 */
import { z } from 'zod';
import {
  PAYFLOW_SCOPES,
  createInstallmentSchema,
  createPaymentResponseSchema,
  createPaymentSchema,
  deleteDocumentResponseSchema,
  documentSchema,
  errorBodySchema,
  installmentRecordSchema,
  manualPaidResponseSchema,
  manualPaidSchema,
  oauthErrorSchema,
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
  updateInstallmentSchema,
  uploadDocumentSchema,
  validationErrorSchema,
  webhookPayloadSchema,
} from '../payflow/payflow.schemas.js';

type JsonObject = Record<string, unknown>;

/**
 * Every schema is described by its input side: for a request what the sandbox accepts,
 * for a response what a client must accept. The output side would mark a field with a
 * default as required (RefundResponse.debtorAccountNumber, optional in the spec).
 */
const SCHEMAS = {
  CreatePaymentRequest: createPaymentSchema,
  CreatePaymentResponse: createPaymentResponseSchema,
  InstallmentRecord: installmentRecordSchema,
  CreateInstallmentRequest: createInstallmentSchema,
  UpdateInstallmentRequest: updateInstallmentSchema,
  PaymentStatusResponse: paymentStatusResponseSchema,
  RefundRequest: refundSchema,
  RefundResponse: refundResponseSchema,
  UploadDocumentRequest: uploadDocumentSchema,
  Document: documentSchema,
  DeleteDocumentResponse: deleteDocumentResponseSchema,
  TokenRequest: tokenRequestSchema,
  TokenResponse: tokenResponseSchema,
  PingResponse: pingResponseSchema,
  OrganizationsResponse: organizationsResponseSchema,
  PaymentMethodsResponse: paymentMethodsResponseSchema,
  ResendRequest: resendSchema,
  ResendResponse: resendResponseSchema,
  PrintReceiptRequest: printReceiptSchema,
  PrintReceiptResponse: printReceiptResponseSchema,
  ManualPaidRequest: manualPaidSchema,
  ManualPaidResponse: manualPaidResponseSchema,
  ValidationError: validationErrorSchema,
  Error: errorBodySchema,
  OAuthError: oauthErrorSchema,
  WebhookPayload: webhookPayloadSchema,
} as const satisfies Record<string, z.ZodType>;

type SchemaName = keyof typeof SCHEMAS;

interface Operation {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  group: 'A' | 'B';
  summary: string;
  /** undefined: a valid token is enough; null: no bearer token (the token endpoint). */
  scope: string | undefined | null;
  organization: boolean;
  body?: SchemaName;
  form?: SchemaName;
  response: SchemaName | 'csv';
  /** What a 404 means here; undefined: the endpoint has none. */
  notFound?: string;
  /** A multipart/form-data body the endpoint also takes, beside the JSON one. */
  multipart?: JsonObject;
}

/** uploadDocument's second shape: the file as a part, not as base64 in JSON. */
const MULTIPART_UPLOAD: JsonObject = {
  type: 'object',
  properties: {
    paymentId: { type: 'string', minLength: 1 },
    file: {
      type: 'string',
      contentMediaType: 'application/octet-stream',
      description:
        'The document (at most 10 MiB); its file name and Content-Type become fileName ' +
        'and contentType.',
    },
  },
  required: ['paymentId', 'file'],
};

const UNKNOWN_IN_PATH = 'Unknown payment, installment or document';
/** Endpoints that name the payment in their body answer 404 for an unknown one too. */
const UNKNOWN_IN_BODY = 'Unknown payment (named in the body)';

const { create, update } = PAYFLOW_SCOPES;
/** The spec shows no scope for the endpoint: a valid token is enough. */
const TOKEN_ONLY = undefined;
const P = '/partner';

const OPERATIONS: Operation[] = [
  op(
    'post',
    '/api/payments',
    'A',
    'Create a payment',
    create,
    'CreatePaymentRequest',
    'CreatePaymentResponse',
  ),
  {
    ...op(
      'post',
      '/api/payments/uploadDocument',
      'A',
      'Attach a document',
      TOKEN_ONLY,
      'UploadDocumentRequest',
      'Document',
    ),
    notFound: UNKNOWN_IN_BODY,
    multipart: MULTIPART_UPLOAD,
  },
  op(
    'delete',
    '/api/payments/uploadDocument/{payflow_id}/{document_id}',
    'A',
    'Remove a document',
    TOKEN_ONLY,
    undefined,
    'DeleteDocumentResponse',
  ),
  op(
    'delete',
    '/api/payments/{payflow_id}',
    'A',
    'Cancel a payment',
    TOKEN_ONLY,
    undefined,
    'PaymentStatusResponse',
  ),
  {
    ...op(
      'post',
      '/api/refund',
      'A',
      'Refund a payment',
      update,
      'RefundRequest',
      'RefundResponse',
    ),
    notFound: UNKNOWN_IN_BODY,
  },
  op(
    'get',
    '/api/payments/{payflow_id}/paymentStatus',
    'A',
    'Payment status',
    TOKEN_ONLY,
    undefined,
    'PaymentStatusResponse',
  ),
  op(
    'post',
    '/api/payments/{payflow_id}/installments/create',
    'A',
    'Add an installment',
    TOKEN_ONLY,
    'CreateInstallmentRequest',
    'InstallmentRecord',
  ),
  op(
    'get',
    '/api/payments/{payflow_id}/installments/{installment_id}',
    'A',
    'Get an installment',
    TOKEN_ONLY,
    undefined,
    'InstallmentRecord',
  ),
  op(
    'put',
    '/api/payments/{payflow_id}/installments/{installment_id}',
    'A',
    'Change an installment',
    TOKEN_ONLY,
    'UpdateInstallmentRequest',
    'InstallmentRecord',
  ),
  op(
    'delete',
    '/api/payments/{payflow_id}/installments/{installment_id}',
    'A',
    'Cancel an installment',
    TOKEN_ONLY,
    undefined,
    'InstallmentRecord',
  ),
  {
    method: 'post',
    path: `${P}/auth/token`,
    group: 'B',
    summary: 'Issue an access token (client credentials, HTTP Basic)',
    scope: null,
    organization: false,
    form: 'TokenRequest',
    response: 'TokenResponse',
  },
  {
    ...op(
      'get',
      `${P}/auth/ping`,
      'B',
      'Check the bearer token',
      TOKEN_ONLY,
      undefined,
      'PingResponse',
    ),
    organization: false,
  },
  {
    ...op(
      'get',
      `${P}/auth/organizations`,
      'B',
      'Organizations of the client',
      TOKEN_ONLY,
      undefined,
      'OrganizationsResponse',
    ),
    organization: false,
  },
  op(
    'get',
    `${P}/settlements/generate_csv`,
    'B',
    'Settlement CSV for a date range',
    TOKEN_ONLY,
    undefined,
    'csv',
  ),
  op(
    'get',
    `${P}/payment-methods`,
    'B',
    'Payment methods',
    TOKEN_ONLY,
    undefined,
    'PaymentMethodsResponse',
  ),
  {
    ...op(
      'post',
      `${P}/payment-methods/resend`,
      'B',
      'Re-send a payment to a payment method',
      TOKEN_ONLY,
      'ResendRequest',
      'ResendResponse',
    ),
    notFound: UNKNOWN_IN_BODY,
  },
  op(
    'post',
    `${P}/payments/{payment_id}/receipts/terminal/print`,
    'B',
    'Print a terminal receipt',
    TOKEN_ONLY,
    'PrintReceiptRequest',
    'PrintReceiptResponse',
  ),
  op(
    'post',
    `${P}/payments/{payment_id}/manual-paid`,
    'B',
    'Mark a payment paid manually',
    TOKEN_ONLY,
    'ManualPaidRequest',
    'ManualPaidResponse',
  ),
];

function op(
  method: Operation['method'],
  path: string,
  group: Operation['group'],
  summary: string,
  scope: string | undefined,
  body: SchemaName | undefined,
  response: Operation['response'],
): Operation {
  return {
    method,
    path,
    group,
    summary,
    scope,
    organization: true,
    response,
    ...(body ? { body } : {}),
    ...(path.includes('{') ? { notFound: UNKNOWN_IN_PATH } : {}),
  };
}

function ref(name: SchemaName): JsonObject {
  return { $ref: `#/components/schemas/${name}` };
}

function jsonContent(name: SchemaName): JsonObject {
  return { 'application/json': { schema: ref(name) } };
}

function toSchema(schema: z.ZodType): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  });
  return rest;
}

function errorResponses(operation: Operation): JsonObject {
  if (operation.scope === null) {
    return {
      '400': { description: 'RFC 6749 error', content: jsonContent('OAuthError') },
      '401': { description: 'Wrong client credentials', content: jsonContent('OAuthError') },
    };
  }
  const error = (description: string) => ({ description, content: jsonContent('Error') });
  return {
    '401': error('Missing, invalid or expired bearer token'),
    '403': error('Missing scope or organization not allowed'),
    ...(operation.notFound === undefined ? {} : { '404': error(operation.notFound) }),
    '422': {
      description: 'Validation or business-rule error',
      content: jsonContent('ValidationError'),
    },
    '429': error('Rate limited (Retry-After)'),
  };
}

function parameters(operation: Operation): JsonObject[] {
  const result: JsonObject[] = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (operation.organization) {
    result.push({
      name: 'X-Organization-Id',
      in: 'header',
      required: false,
      description: 'Required when the client belongs to several organizations.',
      schema: { type: 'string' },
    });
  }
  if (operation.response === 'csv') {
    const query = toSchema(settlementQuerySchema);
    const properties = (query.properties ?? {}) as Record<string, JsonObject>;
    const required = new Set((query.required ?? []) as string[]);
    for (const [name, schema] of Object.entries(properties)) {
      result.push({ name, in: 'query', required: required.has(name), schema });
    }
  }
  return result;
}

function operationObject(operation: Operation): JsonObject {
  const security =
    operation.scope === null
      ? [{ clientBasic: [] }]
      : [{ oauth2: operation.scope === undefined ? [] : [operation.scope] }];
  const requestBody = operation.body
    ? {
        required: true,
        content: {
          ...jsonContent(operation.body),
          ...(operation.multipart
            ? { 'multipart/form-data': { schema: operation.multipart } }
            : {}),
        },
      }
    : operation.form
      ? {
          required: true,
          content: { 'application/x-www-form-urlencoded': { schema: ref(operation.form) } },
        }
      : undefined;
  const ok =
    operation.response === 'csv'
      ? { description: 'RFC 4180 CSV', content: { 'text/csv': { schema: { type: 'string' } } } }
      : { description: 'OK', content: jsonContent(operation.response) };
  return {
    summary: operation.summary,
    tags: [operation.group === 'A' ? 'Payment management (A)' : 'Partner (B)'],
    security,
    parameters: parameters(operation),
    ...(requestBody ? { requestBody } : {}),
    responses: { '200': ok, ...errorResponses(operation) },
  };
}

export function buildOpenApiDocument(serverUrl: string): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const operation of OPERATIONS) {
    paths[operation.path] = {
      ...paths[operation.path],
      [operation.method]: operationObject(operation),
    };
  }
  const schemas = Object.fromEntries(
    Object.entries(SCHEMAS).map(([name, schema]) => [name, toSchema(schema)]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Payflow sandbox (Payment Collection Service)',
      version: '1',
      description:
        'Group A (payment management) at the root, group B (partner) under /partner. ' +
        'Shapes where the Payflow spec says "not shown" follow docs/assumptions.md.',
    },
    servers: [{ url: serverUrl }],
    tags: [{ name: 'Payment management (A)' }, { name: 'Partner (B)' }],
    paths,
    webhooks: {
      paymentUpdate: {
        post: {
          summary: 'Payment Update (also status update and terminal failure)',
          parameters: [
            { name: 'X-Api-Key', in: 'header', required: false, schema: { type: 'string' } },
            {
              name: 'X-Payflow-Delivery',
              in: 'header',
              required: true,
              schema: { type: 'string' },
            },
          ],
          requestBody: { required: true, content: jsonContent('WebhookPayload') },
          responses: { '200': { description: 'Any 2xx counts as delivered' } },
        },
      },
    },
    components: {
      schemas,
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          flows: {
            clientCredentials: {
              tokenUrl: `${P}/auth/token`,
              scopes: {
                [create]: 'Create payments',
                [update]: 'Refund payments',
              },
            },
          },
        },
        clientBasic: { type: 'http', scheme: 'basic' },
      },
    },
  };
}

/** Number of operations described (the spec has 18). */
export const OPENAPI_OPERATION_COUNT = OPERATIONS.length;
