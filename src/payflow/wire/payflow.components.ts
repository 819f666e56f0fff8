/**
 * Payflow's wire schemas under the names the spec gives its components, in the spec's
 * order. The sandbox publishes them so in its OpenAPI document; the client needs no names.
 */
import type { z } from 'zod';
import * as wire from './payflow.schemas.js';

export const PAYFLOW_COMPONENT_SCHEMAS = {
  CreatePaymentRequest: wire.createPaymentSchema,
  CreatePaymentResponse: wire.createPaymentResponseSchema,
  InstallmentRecord: wire.installmentRecordSchema,
  CreateInstallmentRequest: wire.createInstallmentSchema,
  UpdateInstallmentRequest: wire.updateInstallmentSchema,
  PaymentStatusResponse: wire.paymentStatusResponseSchema,
  RefundRequest: wire.refundSchema,
  RefundResponse: wire.refundResponseSchema,
  UploadDocumentRequest: wire.uploadDocumentSchema,
  Document: wire.documentSchema,
  DeleteDocumentResponse: wire.deleteDocumentResponseSchema,
  TokenRequest: wire.tokenRequestSchema,
  TokenResponse: wire.tokenResponseSchema,
  PingResponse: wire.pingResponseSchema,
  OrganizationsResponse: wire.organizationsResponseSchema,
  PaymentMethodsResponse: wire.paymentMethodsResponseSchema,
  ResendRequest: wire.resendSchema,
  ResendResponse: wire.resendResponseSchema,
  PrintReceiptRequest: wire.printReceiptSchema,
  PrintReceiptResponse: wire.printReceiptResponseSchema,
  ManualPaidRequest: wire.manualPaidSchema,
  ManualPaidResponse: wire.manualPaidResponseSchema,
  ValidationError: wire.validationErrorSchema,
  Error: wire.errorBodySchema,
  OAuthError: wire.oauthErrorSchema,
  WebhookPayload: wire.webhookPayloadSchema,
} as const satisfies Record<string, z.ZodType>;

export type PayflowComponentName = keyof typeof PAYFLOW_COMPONENT_SCHEMAS;
