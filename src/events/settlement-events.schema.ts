/** The events of the settlements topic (TOPIC_SETTLEMENTS), one schema each. */
import { z } from 'zod';
import {
  amountSchema,
  currencySchema,
  isoDateSchema,
  settlementEventSchema,
} from './event-envelope.schema.js';

const fileIdSchema = z.uuid().describe('the settlement file (a stored version of one night)');

export const settlementLineSchema = settlementEventSchema(
  'settlement.line',
  'One good row of a settlement file.',
  {
    orderId: z
      .string()
      .min(1)
      .nullable()
      .describe('the ERP order when payflow-bridge created the payment, else null'),
    paymentId: z.string().min(1).nullable().describe("the row's Payflow payment id, or null"),
    data: z.strictObject({
      fileId: fileIdSchema.describe('joins the line to its settlement.file_available'),
      lineNumber: z.number().int().describe('where the row starts in the file (header = 1)'),
      settlementId: z.string(),
      settlementDate: isoDateSchema,
      paymentNumber: z.number().int().nullable(),
      installmentId: z.string().nullable(),
      internalRef: z.string().nullable(),
      orderNumber: z.string().nullable(),
      transactionType: z.string().describe('as Payflow writes it: payment or refund'),
      currency: currencySchema,
      grossAmount: amountSchema,
      feeAmount: amountSchema,
      netAmount: amountSchema,
      bookedAt: z.iso.datetime().describe('when Payflow booked the money movement (UTC)'),
    }),
  },
);

export const settlementFileAvailableSchema = settlementEventSchema(
  'settlement.file_available',
  'A settlement file was stored, after all its lines.',
  {
    orderId: z.null(),
    paymentId: z.null(),
    data: z.strictObject({
      fileId: fileIdSchema,
      dateFrom: isoDateSchema,
      dateTo: isoDateSchema,
      format: z.string(),
      version: z.number().int().min(1),
      replacesFileId: fileIdSchema.nullable().describe('the version this one replaces'),
      rows: z.number().int().min(0).describe('its settlement.line events'),
      badRows: z.number().int().min(0).describe('rows that failed the checks (not published)'),
      badRowSamples: z
        .array(z.strictObject({ lineNumber: z.number().int(), error: z.string() }))
        .describe('the first bad rows'),
      sizeBytes: z.number().int().min(0),
      sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .describe('hex SHA-256 of the file as received'),
      pulledAt: z.iso.datetime(),
    }),
  },
);

export const settlementExceptionSchema = settlementEventSchema(
  'settlement.exception',
  'A reconciliation finding: settled money that does not match the money due. Published ' +
    'once, when the finding opens.',
  {
    orderId: z
      .string()
      .min(1)
      .nullable()
      .describe('the ERP order of the payment, or null when the bridge does not know it'),
    paymentId: z.string().min(1).describe("the Payflow payment id (the event's key)"),
    data: z.strictObject({
      findingId: z
        .string()
        .regex(/^\d+$/)
        .describe('settlement_findings.id (acknowledge it by this)'),
      kind: z
        .enum([
          'amount_mismatch',
          'unknown_payment',
          'not_settled',
          'settled_twice',
          'refund_mismatch',
        ])
        .describe('CONTRACT §10'),
      subject: z
        .string()
        .describe('what it is about: payment:<Payflow payment id> or installment:<installment id>'),
      installmentId: z.string().nullable().describe("Payflow's installment id, when about one"),
      currency: currencySchema,
      expectedAmount: amountSchema
        .nullable()
        .describe('the amount due (refunds: the refunds made); null when none is known'),
      settledAmount: amountSchema.describe(
        'the amount the current settlement lines settle (refunds: as a positive amount)',
      ),
      openedAt: z.iso.datetime(),
    }),
  },
);

export const settlementReconciledSchema = settlementEventSchema(
  'settlement.reconciled',
  'The totals of one settlement date of an organization in one currency, published after ' +
    'the night is reconciled and again only when they change.',
  {
    orderId: z.null(),
    paymentId: z.null(),
    data: z.strictObject({
      settlementDate: isoDateSchema,
      currency: currencySchema,
      grossAmount: amountSchema.describe('sum of the lines, exact'),
      feeAmount: amountSchema,
      netAmount: amountSchema,
      lines: z.number().int().min(0).describe('lines of the current file version'),
      linesMatched: z.number().int().min(0).describe('lines that matched what is due'),
      findings: z
        .number()
        .int()
        .min(0)
        .describe('distinct findings (kind and subject) among these lines'),
    }),
  },
);
