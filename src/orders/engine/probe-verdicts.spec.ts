/**
 * Every rule of the probes (issue 19), fed with Payflow's GET paymentStatus answers as the
 * client parses them, in both shapes the sandbox writes (SANDBOX_SHAPES): `standard`, and
 * `alternate` (epoch-millisecond times, a date-time dueDate, unknown fields in every object).
 */
import { describe, expect, it } from '@jest/globals';
import { paymentStatusResponseSchema } from '../../payflow/wire/payflow.schemas.js';
import { fromWirePaymentStatus } from '../../payflow/wire/payflow.mapping.js';
import type { PaymentStatus } from '../../payflow/payflow.types.js';
import { cancelGoneVerdict, cancelVerdict } from '../cancelled/cancelled.probe.js';
import { documentAttachedVerdict } from '../document-attached/document-attached.probe.js';
import { documentRemovedVerdict } from '../document-removed/document-removed.probe.js';
import { installmentAddedVerdict } from '../installment-added/installment-added.probe.js';
import { installmentRemovedVerdict } from '../installment-removed/installment-removed.probe.js';
import { markPaidVerdict } from '../marked-paid/marked-paid.probe.js';

type Shape = 'standard' | 'alternate';
const SHAPES: readonly Shape[] = ['standard', 'alternate'];
const UPLOADED_MS = Date.UTC(2026, 10, 1, 10, 0, 0);
const UNKNOWN = {
  sandboxShape: 'alternate',
  sandboxUnknownNull: null,
  sandboxUnknownList: [1, 'two'],
};

interface InstallmentFixture {
  readonly id: string;
  readonly date: string;
  readonly grossAmount: number;
  readonly status: string;
}

interface FileFixture {
  readonly id: string;
  readonly fileName?: string;
  readonly contentType?: string;
  readonly size?: number;
}

interface Fixture {
  readonly status?: string;
  readonly installments?: readonly InstallmentFixture[];
  /** null: `files` absent from the answer. */
  readonly files?: readonly FileFixture[] | null;
}

const BASE_INSTALLMENTS: readonly InstallmentFixture[] = [
  { id: 'inst-1', date: '2026-12-01', grossAmount: 416.67, status: 'CREATED' },
  { id: 'inst-2', date: '2027-01-01', grossAmount: 416.67, status: 'CREATED' },
];

/** The JSON text Payflow (the sandbox) sends in `shape`, parsed as the client parses it. */
function paymentStatus(shape: Shape, fixture: Fixture = {}): PaymentStatus {
  const alternate = shape === 'alternate';
  const extra = alternate ? UNKNOWN : {};
  const time = (ms: number): number | string => (alternate ? ms : new Date(ms).toISOString());
  const installments = (fixture.installments ?? BASE_INSTALLMENTS).map((entry) => ({
    ...entry,
    type: 'scheduled',
    numTried: 1,
    successfullyChargedAt: entry.status === 'PAID' ? time(UPLOADED_MS) : null,
    numFailed: 0,
    lastFailedAt: null,
    ...extra,
  }));
  const files = fixture.files?.map((file) => ({
    ...file,
    ...(file.fileName === undefined ? {} : { paymentId: 'pay-1', uploadedAt: time(UPLOADED_MS) }),
    ...extra,
  }));
  const body = {
    totalAmount: 833.34,
    installments,
    paymentId: 'pay-1',
    paymentNumber: 1042,
    paymentStatus: { paymentStatus: fixture.status ?? 'SENT', ...extra },
    merchantId: 'org-1',
    createdAt: '2026-11-01T09:00:00.000Z',
    dueDate: alternate ? '2026-12-01T00:00:00.000Z' : '2026-12-01',
    ...(files === undefined ? {} : { files }),
    currency: 'NOK',
    ...extra,
  };
  const parsed = paymentStatusResponseSchema.parse(JSON.parse(JSON.stringify(body)));
  return fromWirePaymentStatus(parsed, 'NOK');
}

describe.each(SHAPES)('probe verdicts on the %s shape', (shape) => {
  describe('order.cancelled', () => {
    it('took effect when the payment is REJECTED', () => {
      const verdict = cancelVerdict(paymentStatus(shape, { status: 'REJECTED' }));
      expect(verdict).toMatchObject({
        kind: 'took_effect',
        result: { status: 'REJECTED' },
        evidence: { read: 'GET paymentStatus', shown: 'paymentStatus REJECTED' },
      });
    });

    it.each(['SENT', 'OPENED', 'PENDING', 'SUCCESS'])('not applied when it is %s', (status) => {
      expect(cancelVerdict(paymentStatus(shape, { status }))).toEqual({
        kind: 'not_applied',
        evidence: { read: 'GET paymentStatus', shown: `paymentStatus ${status}` },
      });
    });

    it('took effect when the payment is gone (404)', () => {
      expect(cancelGoneVerdict()).toMatchObject({
        kind: 'took_effect',
        result: { status: 'REJECTED', installments: [] },
      });
    });
  });

  describe('order.marked_paid', () => {
    it.each(['PAID', 'SUCCESS'])('took effect when the payment is %s', (status) => {
      expect(markPaidVerdict(paymentStatus(shape, { status }))).toMatchObject({
        kind: 'took_effect',
        result: { paymentId: 'pay-1', paymentStatus: status },
      });
    });

    it.each(['SENT', 'PENDING', 'REJECTED'])('not applied when it is %s', (status) => {
      expect(markPaidVerdict(paymentStatus(shape, { status })).kind).toBe('not_applied');
    });
  });

  describe('order.installment_added', () => {
    const wanted = { date: '2027-03-01', grossAmountMinor: 30000 };
    const known = new Set(['inst-1', 'inst-2']);

    it('adopts an unknown installment of that date and amount', () => {
      const status = paymentStatus(shape, {
        installments: [
          ...BASE_INSTALLMENTS,
          { id: 'inst-new', date: '2027-03-01', grossAmount: 300, status: 'CREATED' },
        ],
      });
      const verdict = installmentAddedVerdict(status, wanted, known);
      expect(verdict).toMatchObject({
        kind: 'took_effect',
        result: { id: 'inst-new', date: '2027-03-01', grossAmountMinor: 30000, currency: 'NOK' },
      });
    });

    it('does not adopt an installment the bridge knows', () => {
      const status = paymentStatus(shape, {
        installments: [{ id: 'inst-1', date: '2027-03-01', grossAmount: 300, status: 'CREATED' }],
      });
      expect(installmentAddedVerdict(status, wanted, new Set(['inst-1'])).kind).toBe('not_applied');
    });

    it.each([
      ['another date', '2027-03-02', 300],
      ['another amount', '2027-03-01', 300.01],
    ])('not applied when the unknown installment has %s', (_what, date, grossAmount) => {
      const status = paymentStatus(shape, {
        installments: [
          ...BASE_INSTALLMENTS,
          { id: 'inst-other', date, grossAmount, status: 'CREATED' },
        ],
      });
      expect(installmentAddedVerdict(status, wanted, known).kind).toBe('not_applied');
    });

    it('not applied when there is no unknown installment', () => {
      const verdict = installmentAddedVerdict(paymentStatus(shape), wanted, known);
      expect(verdict).toMatchObject({ kind: 'not_applied' });
      expect(verdict.evidence.shown).toContain('2 installments, 0 unknown');
    });
  });

  describe('order.installment_removed', () => {
    it('took effect when the installment is CANCELLED', () => {
      const status = paymentStatus(shape, {
        installments: [
          { id: 'inst-1', date: '2026-12-01', grossAmount: 416.67, status: 'CANCELLED' },
        ],
      });
      expect(installmentRemovedVerdict(status, 'inst-1')).toMatchObject({
        kind: 'took_effect',
        result: { status: 'CANCELLED' },
      });
    });

    it('took effect when the installment is no longer listed', () => {
      expect(installmentRemovedVerdict(paymentStatus(shape), 'inst-9')).toMatchObject({
        kind: 'took_effect',
        evidence: { shown: 'installment inst-9 not listed' },
      });
    });

    it('not applied when the installment is still live', () => {
      expect(installmentRemovedVerdict(paymentStatus(shape), 'inst-1')).toEqual({
        kind: 'not_applied',
        evidence: { read: 'GET paymentStatus', shown: 'installment inst-1 CREATED' },
      });
    });
  });

  describe('order.document_attached', () => {
    const document = { fileName: 'invoice.pdf', contentType: 'application/pdf', size: 2048 };
    const known = new Set(['doc-old']);

    it('adopts an unknown file of that name, type and size', () => {
      const status = paymentStatus(shape, {
        files: [
          { id: 'doc-old', fileName: 'invoice.pdf', contentType: 'application/pdf', size: 2048 },
          { id: 'doc-new', fileName: 'invoice.pdf', contentType: 'application/pdf', size: 2048 },
        ],
      });
      const verdict = documentAttachedVerdict(status, document, known);
      expect(verdict).toMatchObject({
        kind: 'took_effect',
        result: { id: 'doc-new', paymentId: 'pay-1', size: 2048, fileName: 'invoice.pdf' },
      });
      if (verdict.kind !== 'took_effect') throw new Error('expected took_effect');
      expect(verdict.result.uploadedAt).toBe(new Date(UPLOADED_MS).toISOString());
    });

    it('not applied when no unknown file has that name (or has another size)', () => {
      const status = paymentStatus(shape, {
        files: [
          { id: 'doc-old', fileName: 'invoice.pdf', contentType: 'application/pdf', size: 2048 },
          { id: 'doc-2', fileName: 'invoice.pdf', contentType: 'application/pdf', size: 99 },
          { id: 'doc-3', fileName: 'other.pdf', contentType: 'application/pdf', size: 2048 },
        ],
      });
      expect(documentAttachedVerdict(status, document, known).kind).toBe('not_applied');
    });

    it('undecided when an unknown file shows only its id (the spec shows no other field)', () => {
      const status = paymentStatus(shape, { files: [{ id: 'doc-bare' }] });
      expect(documentAttachedVerdict(status, document, known)).toMatchObject({
        kind: 'undecided',
      });
    });

    it('undecided when the answer has no files at all', () => {
      const status = paymentStatus(shape, { files: null });
      expect(documentAttachedVerdict(status, document, known).kind).toBe('undecided');
    });

    it('not applied when files is empty', () => {
      const status = paymentStatus(shape, { files: [] });
      expect(documentAttachedVerdict(status, document, known).kind).toBe('not_applied');
    });
  });

  describe('order.document_removed', () => {
    it('not applied while the file is listed', () => {
      const status = paymentStatus(shape, { files: [{ id: 'doc-1' }] });
      expect(documentRemovedVerdict(status, 'doc-1')).toEqual({
        kind: 'not_applied',
        evidence: { read: 'GET paymentStatus', shown: 'file doc-1 listed' },
      });
    });

    it('took effect when the file is no longer listed', () => {
      const status = paymentStatus(shape, { files: [{ id: 'doc-2', fileName: 'a.pdf' }] });
      expect(documentRemovedVerdict(status, 'doc-1')).toMatchObject({
        kind: 'took_effect',
        result: { id: 'doc-1', deleted: true },
      });
    });

    it('undecided when the answer has no files at all', () => {
      const status = paymentStatus(shape, { files: null });
      expect(documentRemovedVerdict(status, 'doc-1').kind).toBe('undecided');
    });
  });
});
