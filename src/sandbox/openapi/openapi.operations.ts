/**
 * The sandbox's Payflow surface as data: one line per endpoint (method, path, group, scope,
 * body, response, what a 404 means; bodies and responses by the spec's schema names,
 * PAYFLOW_COMPONENT_SCHEMAS). openapi.ts turns this table into the OpenAPI document; a new
 * endpoint is one line here.
 */
import type { PayflowComponentName } from '../../payflow/wire/payflow.components.js';
import { PAYFLOW_SCOPES } from '../../payflow/wire/payflow.schemas.js';

export type JsonObject = Record<string, unknown>;

export interface Operation {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  group: 'A' | 'B';
  summary: string;
  /** undefined: a valid token is enough; null: no bearer token (the token endpoint). */
  scope: string | undefined | null;
  organization: boolean;
  body?: PayflowComponentName;
  form?: PayflowComponentName;
  response: PayflowComponentName | 'csv';
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
/** Where group B (partner) is served. */
export const P = '/partner';

/** The 18 endpoints of the Payflow spec, as the sandbox serves them. */
export const OPERATIONS: readonly Operation[] = [
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
  body: PayflowComponentName | undefined,
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
