/**
 * Group A behaviour: payments, refunds, installments and documents, with every rule of
 * the spec and of docs/assumptions.md. Framework-free: routes hand it validated bodies;
 * it throws ApiError for answers other than 200.
 */
import { createHash } from 'node:crypto';
import { isCurrency } from '../../money/money.js';
import {
  DEFAULT_PAYMENT_METHOD_ID,
  type CreateInstallmentBody,
  type CreatePaymentBody,
  type UpdateInstallmentBody,
} from '../../payflow/wire/payflow.schemas.js';
import { AmountReader, sumsTo } from './amounts.js';
import type { DocumentUpload } from './document-upload.js';
import { businessError, notFound, unprocessable, type Detail } from '../http/errors.js';
import { newObjectId } from '../state/ids.js';
import {
  bodyLoc as loc,
  businessDetail as business,
  newInstallment,
  type PaymentLifecycle,
} from './payment-lifecycle.js';
import type { Organization, Payment, Refund } from '../state/state.js';
import { amount } from './shapes.js';

export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

interface RefundInput {
  crossPayment: string;
  currency: string;
  totalGrossAmount: number;
  totalNetAmount: number;
  invoiceLines: {
    grossUnitPrice: number;
    netUnitPrice: number;
    vatAmount: number;
  }[];
}

export class PaymentsService {
  private readonly state;
  private readonly shapes;

  constructor(private readonly lifecycle: PaymentLifecycle) {
    this.state = lifecycle.state;
    this.shapes = lifecycle.shapes;
  }

  create(
    organization: Organization,
    clientId: string,
    body: CreatePaymentBody,
    raw: unknown,
    now: number,
  ) {
    const request = body.payment;
    const currency = request.currency ?? organization.currency;
    if (!isCurrency(currency)) {
      throw unprocessable([
        {
          loc: ['body', 'payment', 'currency'],
          msg: `${currency} is not an ISO 4217 currency`,
          type: 'value_error.currency',
        },
      ]);
    }
    const amounts = new AmountReader(currency);
    const total = amounts.minor(
      request.totalGrossAmount,
      loc('payment', 'totalGrossAmount'),
      'positive',
    );
    const net = amounts.minor(
      request.totalNetAmount,
      loc('payment', 'totalNetAmount'),
      'non-negative',
    );
    amounts.date(request.dueDate, loc('payment', 'dueDate'));
    const itemTotals = request.items ? amounts.items(request.items, loc('payment', 'items')) : [];
    const plan = request.installments?.length ? request.installments : null;
    const planMinor = (plan ?? []).map((entry, index) => {
      const at = loc('payment', 'installments', index);
      amounts.date(entry.date, [...at, 'date']);
      if (entry.items) amounts.items(entry.items, [...at, 'items']);
      return amounts.minor(entry.grossAmount, [...at, 'grossAmount'], 'positive');
    });
    if (amounts.issues.length > 0) throw unprocessable(amounts.issues);

    const issues: Detail[] = [];
    const profileId = this.resolveProfile(organization, request, issues);
    const paymentMethodId = body.paymentMethodId ?? DEFAULT_PAYMENT_METHOD_ID;
    if (
      paymentMethodId !== DEFAULT_PAYMENT_METHOD_ID &&
      !this.state.findPaymentMethod(paymentMethodId)
    ) {
      issues.push(
        business(
          loc('paymentMethodId'),
          'unknown_payment_method',
          `no payment method ${paymentMethodId}`,
        ),
      );
    }
    if (plan && !sumsTo(planMinor, total)) {
      issues.push(
        business(
          loc('payment', 'installments'),
          'installments_sum_mismatch',
          'the installments do not sum to totalGrossAmount',
        ),
      );
    }
    if (itemTotals.length > 0) {
      const totals = [
        ['totalGrossAmount', 'gross', total],
        ['totalNetAmount', 'net', net],
      ] as const;
      for (const [field, side, expected] of totals) {
        if (
          !sumsTo(
            itemTotals.map((item) => item[side]),
            expected,
          )
        ) {
          issues.push(
            business(
              loc('payment', field),
              'totals_mismatch',
              `${field} is not the sum of the items ${side} totals`,
            ),
          );
        }
      }
    }
    if (issues.length > 0) throw unprocessable(issues);

    const id = newObjectId(now);
    const callback = body.callback;
    // docs/assumptions.md: send_payment_link defaults to true (the spec shows no default).
    const sendLink = body.communication?.send_payment_link ?? true;
    const payment: Payment = {
      id,
      number: this.state.nextPaymentNumber++,
      organizationId: organization.id,
      clientId,
      bodyJson: JSON.stringify(raw),
      currency,
      totalMinor: total,
      netMinor: net,
      status: 'DRAFT',
      installments: plan
        ? plan.map((entry, index) =>
            newInstallment(
              now,
              entry.date,
              index === 0 ? 'initial' : 'scheduled',
              planMinor[index] ?? 0,
              entry.items,
              sendLink,
            ),
          )
        : null,
      refunds: [],
      documents: new Map(),
      createdAt: now,
      dueDate: request.dueDate,
      internalRef: request.internalRef ?? null,
      orderNumber: body.order.orderNumber,
      profileId,
      paymentMethodId,
      issued: sendLink,
      callback: {
        url: callback?.url,
        statusUpdateUrl: callback?.status_update_url,
        terminalFailureUrl: callback?.terminal_failure_url,
        apiKey: apiKeyText(callback?.api_key),
      },
      lastTerminalId: null,
      manualPaidNote: null,
      terminalFailures: 0,
    };
    this.state.payments.add(payment);
    for (const installment of payment.installments ?? [])
      this.lifecycle.scheduleDebit(payment, installment);
    // The answer shows the payment as created; the link goes out right after it, so the
    // installments are SENT from the next read on. Creation sends no webhook.
    const answer = this.shapes.createPayment(payment, organization);
    if (sendLink) this.lifecycle.issue(payment, 'link');
    return answer;
  }

  status(organization: Organization, paymentId: string) {
    return this.shapes.paymentStatus(this.lifecycle.find(organization, paymentId), 'status');
  }

  cancel(organization: Organization, paymentId: string, now: number) {
    const payment = this.lifecycle.find(organization, paymentId);
    this.lifecycle.refuseFinal(payment, ['path', 'payflow_id']);
    const previous = payment.status;
    this.lifecycle.cancel(payment);
    this.lifecycle.notify(payment, 'cancelled', previous, now);
    return this.shapes.paymentStatus(payment, 'cancel');
  }

  refund(organization: Organization, body: RefundInput, now: number) {
    const payment = this.lifecycle.find(organization, body.crossPayment);
    if (body.currency !== payment.currency) {
      throw businessError(
        ['body', 'currency'],
        'currency_mismatch',
        `the payment is in ${payment.currency}, not ${body.currency}`,
      );
    }
    const amounts = new AmountReader(payment.currency);
    const gross = amounts.minor(body.totalGrossAmount, loc('totalGrossAmount'), 'positive');
    const net = amounts.minor(body.totalNetAmount, loc('totalNetAmount'), 'non-negative');
    if (net > gross && amounts.issues.length === 0) {
      amounts.issues.push({
        loc: loc('totalNetAmount'),
        msg: 'must not exceed totalGrossAmount',
        type: 'value_error.number.not_le',
      });
    }
    body.invoiceLines.forEach((line, index) => {
      for (const field of ['grossUnitPrice', 'netUnitPrice', 'vatAmount'] as const) {
        amounts.minor(line[field], loc('invoiceLines', index, field));
      }
    });
    if (amounts.issues.length > 0) throw unprocessable(amounts.issues);
    const refundable = this.lifecycle.refundable(payment);
    if (gross > refundable) {
      throw businessError(
        loc('totalGrossAmount'),
        'refund_exceeds_remaining',
        `at most ${amount(refundable, payment.currency)} ${payment.currency} can be refunded`,
      );
    }
    const remaining = refundable - gross;
    const refund: Refund = {
      refundId: newObjectId(now),
      grossMinor: gross,
      netMinor: net,
      refundType: remaining === 0 ? 'full' : 'partial',
      remainingMinor: remaining,
      createdAt: now,
    };
    payment.refunds.push(refund);
    this.lifecycle.book(payment, null, -gross, 'refund', now);
    this.lifecycle.notify(payment, 'refunded', payment.status, now);
    return this.shapes.refund(payment, refund);
  }

  // ------------------------------------------------------------------ installments (A)

  createInstallment(
    organization: Organization,
    paymentId: string,
    body: CreateInstallmentBody,
    now: number,
  ) {
    const payment = this.lifecycle.find(organization, paymentId);
    const installments = payment.installments;
    if (!installments) {
      throw businessError(
        ['path', 'payflow_id'],
        'not_installment_payment',
        'the payment was created without installments',
      );
    }
    this.lifecycle.refuseFinal(payment, ['path', 'payflow_id']);
    const amounts = new AmountReader(payment.currency);
    const gross = amounts.minor(body.grossAmount, loc('grossAmount'), 'positive');
    amounts.date(body.date, loc('date'));
    if (body.items) amounts.items(body.items, loc('items'));
    if (amounts.issues.length > 0) throw unprocessable(amounts.issues);
    const installment = newInstallment(
      now,
      body.date,
      'scheduled',
      gross,
      body.items,
      payment.issued,
    );
    installments.push(installment);
    payment.totalMinor += gross;
    this.lifecycle.scheduleDebit(payment, installment);
    this.lifecycle.notify(payment, 'installment_created', payment.status, now);
    return this.shapes.installment(installment, payment.currency, 'shown');
  }

  /**
   * The installment a PUT or DELETE may change: neither it nor its payment is final (like
   * create: a final payment's installments, and so its total, are settled).
   */
  private changeable(organization: Organization, paymentId: string, installmentId: string) {
    const payment = this.lifecycle.find(organization, paymentId);
    const installment = this.lifecycle.installment(payment, installmentId);
    this.lifecycle.refuseFinalInstallment(installment);
    this.lifecycle.refuseFinal(payment, ['path', 'payflow_id']);
    return { payment, installment };
  }

  getInstallment(organization: Organization, paymentId: string, installmentId: string) {
    const payment = this.lifecycle.find(organization, paymentId);
    const installment = this.lifecycle.installment(payment, installmentId);
    return this.shapes.installment(installment, payment.currency, 'shown');
  }

  updateInstallment(
    organization: Organization,
    paymentId: string,
    installmentId: string,
    body: UpdateInstallmentBody,
    now: number,
  ) {
    const { payment, installment } = this.changeable(organization, paymentId, installmentId);
    const amounts = new AmountReader(payment.currency);
    const gross =
      body.grossAmount === undefined
        ? installment.grossMinor
        : amounts.minor(body.grossAmount, loc('grossAmount'), 'positive');
    if (body.date !== undefined) amounts.date(body.date, loc('date'));
    if (body.items) amounts.items(body.items, loc('items'));
    if (amounts.issues.length > 0) throw unprocessable(amounts.issues);
    payment.totalMinor += gross - installment.grossMinor;
    installment.grossMinor = gross;
    if (body.items) installment.items = body.items;
    if (body.date !== undefined && body.date !== installment.date) {
      installment.date = body.date;
      this.lifecycle.scheduleDebit(payment, installment);
    }
    this.lifecycle.notify(payment, 'installment_updated', payment.status, now);
    // The spec shows no answer for PUT and DELETE of an installment.
    return this.shapes.installment(installment, payment.currency, 'not_shown');
  }

  deleteInstallment(
    organization: Organization,
    paymentId: string,
    installmentId: string,
    now: number,
  ) {
    const { payment, installment } = this.changeable(organization, paymentId, installmentId);
    const previous = payment.status;
    installment.status = 'CANCELLED';
    installment.debitVersion++;
    payment.totalMinor -= installment.grossMinor;
    this.lifecycle.updateStatusFromInstallments(payment);
    this.lifecycle.notify(payment, 'installment_cancelled', previous, now);
    return this.shapes.installment(installment, payment.currency, 'not_shown');
  }

  // ------------------------------------------------------------------ documents (A)

  uploadDocument(organization: Organization, upload: DocumentUpload, now: number) {
    const payment = this.lifecycle.find(organization, upload.paymentId);
    const bytes = upload.content();
    const size = bytes.length;
    if (size > MAX_DOCUMENT_BYTES) {
      throw businessError(
        upload.contentLoc,
        'document_too_large',
        `the document has ${size} bytes, more than ${MAX_DOCUMENT_BYTES}`,
      );
    }
    const document = {
      id: newObjectId(now),
      paymentId: payment.id,
      fileName: upload.fileName,
      contentType: upload.contentType,
      size,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      uploadedAt: now,
    };
    payment.documents.set(document.id, document);
    return this.shapes.document(document);
  }

  deleteDocument(organization: Organization, paymentId: string, documentId: string) {
    const payment = this.lifecycle.find(organization, paymentId);
    if (!payment.documents.delete(documentId)) {
      throw notFound(`no document ${documentId} on payment ${paymentId}`);
    }
    return { id: documentId, deleted: true as const };
  }

  private resolveProfile(
    organization: Organization,
    request: CreatePaymentBody['payment'],
    issues: Detail[],
  ): string | null {
    if (request.profileId) {
      if (organization.profiles.some((profile) => profile.id === request.profileId))
        return request.profileId;
      issues.push(
        business(loc('payment', 'profileId'), 'unknown_profile', `no profile ${request.profileId}`),
      );
      return null;
    }
    if (request.paymentDepartment) {
      const profile = organization.profiles.find(
        (entry) => entry.department === request.paymentDepartment,
      );
      if (profile) return profile.id;
      issues.push(
        business(
          loc('payment', 'paymentDepartment'),
          'unknown_department',
          `no profile for department ${request.paymentDepartment}`,
        ),
      );
      return null;
    }
    if (organization.profiles.length >= 2) {
      issues.push(
        business(
          loc('payment', 'profileId'),
          'profile_required',
          'the organization has several payment profiles: give profileId or paymentDepartment',
        ),
      );
      return null;
    }
    return organization.profiles[0]?.id ?? null;
  }
}

/** callback.api_key goes back in X-Api-Key, stringified when it is not a string. */
function apiKeyText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
