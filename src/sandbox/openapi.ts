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

const SCHEMAS = {
  CreatePaymentRequest: [createPaymentSchema, 'input'],
  CreatePaymentResponse: [createPaymentResponseSchema, 'output'],
  InstallmentRecord: [installmentRecordSchema, 'output'],
  CreateInstallmentRequest: [createInstallmentSchema, 'input'],
  UpdateInstallmentRequest: [updateInstallmentSchema, 'input'],
  PaymentStatusResponse: [paymentStatusResponseSchema, 'output'],
  RefundRequest: [refundSchema, 'input'],
  RefundResponse: [refundResponseSchema, 'output'],
  UploadDocumentRequest: [uploadDocumentSchema, 'input'],
  Document: [documentSchema, 'output'],
  DeleteDocumentResponse: [deleteDocumentResponseSchema, 'output'],
  TokenRequest: [tokenRequestSchema, 'input'],
  TokenResponse: [tokenResponseSchema, 'output'],
  PingResponse: [pingResponseSchema, 'output'],
  OrganizationsResponse: [organizationsResponseSchema, 'output'],
  PaymentMethodsResponse: [paymentMethodsResponseSchema, 'output'],
  ResendRequest: [resendSchema, 'input'],
  ResendResponse: [resendResponseSchema, 'output'],
  PrintReceiptRequest: [printReceiptSchema, 'input'],
  PrintReceiptResponse: [printReceiptResponseSchema, 'output'],
  ManualPaidRequest: [manualPaidSchema, 'input'],
  ManualPaidResponse: [manualPaidResponseSchema, 'output'],
  ValidationError: [validationErrorSchema, 'output'],
  Error: [errorBodySchema, 'output'],
  OAuthError: [oauthErrorSchema, 'output'],
  WebhookPayload: [webhookPayloadSchema, 'output'],
} as const satisfies Record<string, readonly [z.ZodType, 'input' | 'output']>;

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
}

const { create, update, read } = PAYFLOW_SCOPES;
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
  op(
    'post',
    '/api/payments/uploadDocument',
    'A',
    'Attach a document',
    update,
    'UploadDocumentRequest',
    'Document',
  ),
  op(
    'delete',
    '/api/payments/uploadDocument/{payflow_id}/{document_id}',
    'A',
    'Remove a document',
    update,
    undefined,
    'DeleteDocumentResponse',
  ),
  op(
    'delete',
    '/api/payments/{payflow_id}',
    'A',
    'Cancel a payment',
    update,
    undefined,
    'PaymentStatusResponse',
  ),
  op('post', '/api/refund', 'A', 'Refund a payment', update, 'RefundRequest', 'RefundResponse'),
  op(
    'get',
    '/api/payments/{payflow_id}/paymentStatus',
    'A',
    'Payment status',
    read,
    undefined,
    'PaymentStatusResponse',
  ),
  op(
    'post',
    '/api/payments/{payflow_id}/installments/create',
    'A',
    'Add an installment',
    update,
    'CreateInstallmentRequest',
    'InstallmentRecord',
  ),
  op(
    'get',
    '/api/payments/{payflow_id}/installments/{installment_id}',
    'A',
    'Get an installment',
    read,
    undefined,
    'InstallmentRecord',
  ),
  op(
    'put',
    '/api/payments/{payflow_id}/installments/{installment_id}',
    'A',
    'Change an installment',
    update,
    'UpdateInstallmentRequest',
    'InstallmentRecord',
  ),
  op(
    'delete',
    '/api/payments/{payflow_id}/installments/{installment_id}',
    'A',
    'Cancel an installment',
    update,
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
      undefined,
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
      read,
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
    read,
    undefined,
    'csv',
  ),
  op(
    'get',
    `${P}/payment-methods`,
    'B',
    'Payment methods',
    read,
    undefined,
    'PaymentMethodsResponse',
  ),
  op(
    'post',
    `${P}/payment-methods/resend`,
    'B',
    'Re-send a payment to a payment method',
    update,
    'ResendRequest',
    'ResendResponse',
  ),
  op(
    'post',
    `${P}/payments/{payment_id}/receipts/terminal/print`,
    'B',
    'Print a terminal receipt',
    update,
    'PrintReceiptRequest',
    'PrintReceiptResponse',
  ),
  op(
    'post',
    `${P}/payments/{payment_id}/manual-paid`,
    'B',
    'Mark a payment paid manually',
    update,
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
  };
}

function ref(name: SchemaName): JsonObject {
  return { $ref: `#/components/schemas/${name}` };
}

function jsonContent(name: SchemaName): JsonObject {
  return { 'application/json': { schema: ref(name) } };
}

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
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
    ...(operation.path.includes('{')
      ? { '404': error('Unknown payment, installment or document') }
      : {}),
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
    const query = toSchema(settlementQuerySchema, 'input');
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
    ? { required: true, content: jsonContent(operation.body) }
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
    Object.entries(SCHEMAS).map(([name, [schema, io]]) => [name, toSchema(schema, io)]),
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
                [update]: 'Change payments',
                [read]: 'Read payments and partner data',
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
