/**
 * Group B payment functions: re-send to a payment method (the result goes out as a Payment
 * Update webhook), terminal receipt printing and manual-paid (docs/assumptions.md).
 */
import { PAYMENT_METHOD_TYPES } from '../payflow/payflow.schemas.js';
import { businessError } from './errors.js';
import { bodyLoc as loc, type PaymentLifecycle } from './payment-lifecycle.js';
import type { Organization } from './state.js';

type PaymentMethodType = (typeof PAYMENT_METHOD_TYPES)[number];

export interface ResendInput {
  paymentId: string;
  paymentMethodId: string;
  terminalId?: string | undefined;
  invoiceType?: string | undefined;
}

export class PartnerService {
  private readonly state;

  constructor(private readonly lifecycle: PaymentLifecycle) {
    this.state = lifecycle.state;
  }

  resend(organization: Organization, body: ResendInput, now: number) {
    const payment = this.lifecycle.find(organization, body.paymentId);
    this.lifecycle.refuseFinal(payment, loc('paymentId'));
    const method = this.lifecycle.paymentMethod(body.paymentMethodId);
    if (!method) {
      throw businessError(
        loc('paymentMethodId'),
        'unknown_payment_method',
        `no payment method ${body.paymentMethodId}`,
      );
    }
    const type = method.type as PaymentMethodType;
    switch (type) {
      case 'terminal': {
        if (!body.terminalId) {
          throw businessError(
            loc('terminalId'),
            'terminal_required',
            'a terminal method needs terminalId',
          );
        }
        if (!method.terminals?.some((terminal) => terminal.id === body.terminalId)) {
          throw businessError(
            loc('terminalId'),
            'unknown_terminal',
            `no terminal ${body.terminalId}`,
          );
        }
        payment.lastTerminalId = body.terminalId;
        this.lifecycle.issue(payment, 'other');
        break;
      }
      case 'invoice': {
        if (!body.invoiceType) {
          throw businessError(
            loc('invoiceType'),
            'invoice_type_required',
            'an invoice method needs invoiceType',
          );
        }
        if (method.invoiceTypes && !method.invoiceTypes.includes(body.invoiceType)) {
          throw businessError(
            loc('invoiceType'),
            'unknown_invoice_type',
            `no invoice type ${body.invoiceType}`,
          );
        }
        this.lifecycle.issue(payment, 'other');
        break;
      }
      case 'payment_link': {
        this.lifecycle.issue(payment, 'link');
        break;
      }
    }
    payment.paymentMethodId = method.id;
    this.lifecycle.notify(payment, 'resent', payment.status, now, {
      resend: {
        paymentMethodId: method.id,
        paymentMethodType: method.type,
        terminalId: body.terminalId ?? null,
        invoiceType: body.invoiceType ?? null,
        result: 'sent',
      },
    });
    return { paymentId: payment.id, paymentMethodId: method.id, status: 'accepted' };
  }

  printReceipt(organization: Organization, paymentId: string, terminalId: string | undefined) {
    const payment = this.lifecycle.find(organization, paymentId);
    if (payment.status !== 'SUCCESS' && payment.status !== 'PAID') {
      throw businessError(
        ['path', 'payment_id'],
        'payment_not_paid',
        `the payment is ${payment.status}`,
      );
    }
    const terminals = this.state.paymentMethods.flatMap((method) => method.terminals ?? []);
    const chosen = terminalId ?? payment.lastTerminalId ?? terminals[0]?.id;
    if (chosen === undefined) {
      throw businessError(
        loc('terminalId'),
        'terminal_required',
        'the organization has no terminal',
      );
    }
    if (terminalId !== undefined && !terminals.some((terminal) => terminal.id === terminalId)) {
      throw businessError(loc('terminalId'), 'unknown_terminal', `no terminal ${terminalId}`);
    }
    return { paymentId: payment.id, terminalId: chosen, status: 'printed' };
  }

  manualPaid(organization: Organization, paymentId: string, note: string | undefined, now: number) {
    const payment = this.lifecycle.find(organization, paymentId);
    this.lifecycle.refuseFinal(payment, ['path', 'payment_id']);
    const previous = payment.status;
    payment.status = 'PAID';
    payment.manualPaidNote = note ?? null;
    this.lifecycle.notify(payment, 'manual_paid', previous, now);
    return { paymentId: payment.id, paymentStatus: 'PAID' };
  }
}
