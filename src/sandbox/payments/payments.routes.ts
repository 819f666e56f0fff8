/** Group A, the payment management API, at the sandbox's root. */
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import {
  PAYFLOW_SCOPES,
  createInstallmentSchema,
  createPaymentSchema,
  refundSchema,
  updateInstallmentSchema,
} from '../../payflow/wire/payflow.schemas.js';
import { readDocumentUpload } from './document-upload.js';
import { parseOr422 } from '../http/errors.js';
import { withBodies } from '../http/media-types.js';
import {
  TOKEN_ONLY,
  organizationRoute,
  type OrganizationCall,
  type SandboxContext,
} from '../http/routing.js';

interface PaymentParams {
  payflow_id: string;
}
interface InstallmentParams extends PaymentParams {
  installment_id: string;
}
interface DocumentParams extends PaymentParams {
  document_id: string;
}

const INSTALLMENT = '/api/payments/:payflow_id/installments/:installment_id';

/** A route on the one installment its path names (INSTALLMENT); no scope beyond the token. */
function installmentRoute(
  context: SandboxContext,
  handler: (call: OrganizationCall, payflowId: string, installmentId: string) => unknown,
): RouteHandlerMethod {
  return organizationRoute(context, TOKEN_ONLY, (call) => {
    const params = call.request.params as InstallmentParams;
    return handler(call, params.payflow_id, params.installment_id);
  });
}

export function registerPaymentRoutes(app: FastifyInstance, context: SandboxContext): void {
  const { payments } = context;
  const { create, update } = PAYFLOW_SCOPES;

  app.post(
    '/api/payments',
    organizationRoute(context, create, ({ request, organization, client, now }) => {
      const body = parseOr422(createPaymentSchema, request.body, 'body');
      return payments.create(organization, client.clientId, body, request.body, now);
    }),
  );

  // JSON (base64 content) or multipart/form-data (paymentId, file): docs/assumptions.md.
  withBodies(app, ['multipart'], (scope) => {
    scope.post(
      '/api/payments/uploadDocument',
      organizationRoute(context, TOKEN_ONLY, ({ request, organization, now }) =>
        payments.uploadDocument(organization, readDocumentUpload(request.body), now),
      ),
    );
  });

  app.delete(
    '/api/payments/uploadDocument/:payflow_id/:document_id',
    organizationRoute(context, TOKEN_ONLY, ({ request, organization }) => {
      const params = request.params as DocumentParams;
      return payments.deleteDocument(organization, params.payflow_id, params.document_id);
    }),
  );

  app.delete(
    '/api/payments/:payflow_id',
    organizationRoute(context, TOKEN_ONLY, ({ request, organization, now }) =>
      payments.cancel(organization, (request.params as PaymentParams).payflow_id, now),
    ),
  );

  app.post(
    '/api/refund',
    organizationRoute(context, update, ({ request, organization, now }) =>
      payments.refund(organization, parseOr422(refundSchema, request.body, 'body'), now),
    ),
  );

  app.get(
    '/api/payments/:payflow_id/paymentStatus',
    organizationRoute(context, TOKEN_ONLY, ({ request, organization }) =>
      payments.status(organization, (request.params as PaymentParams).payflow_id),
    ),
  );

  app.post(
    '/api/payments/:payflow_id/installments/create',
    organizationRoute(context, TOKEN_ONLY, ({ request, organization, now }) =>
      payments.createInstallment(
        organization,
        (request.params as PaymentParams).payflow_id,
        parseOr422(createInstallmentSchema, request.body, 'body'),
        now,
      ),
    ),
  );

  app.get(
    INSTALLMENT,
    installmentRoute(context, ({ organization }, payflowId, installmentId) =>
      payments.getInstallment(organization, payflowId, installmentId),
    ),
  );

  app.put(
    INSTALLMENT,
    installmentRoute(context, ({ request, organization, now }, payflowId, installmentId) => {
      const body = parseOr422(updateInstallmentSchema, request.body, 'body');
      return payments.updateInstallment(organization, payflowId, installmentId, body, now);
    }),
  );

  app.delete(
    INSTALLMENT,
    installmentRoute(context, ({ organization, now }, payflowId, installmentId) =>
      payments.deleteInstallment(organization, payflowId, installmentId, now),
    ),
  );
}
