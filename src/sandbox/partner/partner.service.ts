/**
 * Group B payment functions: re-send to a payment method (the result goes out as a Payment
 * Update webhook), terminal receipt printing and manual-paid (docs/assumptions.md).
 */
import { PAYMENT_METHOD_TYPES } from '../../payflow/wire/payflow.schemas.js';
import { businessError } from '../http/errors.js';
import { bodyLoc as loc, type PaymentLifecycle } from '../payments/payment-lifecycle.js';
import type { Organization } from '../state/state.js';

type PaymentMethodType = (typeof PAYMENT_METHOD_TYPES)[number];

export interface ResendInput {
  paymentId: string;
  paymentMethodId: string;
  terminalId?: string | undefined;
  invoiceType?: string | undefined;
}

/** What a resend must name for a method of one type, and the business errors if it does not. */
interface MethodOption {
  readonly field: 'terminalId' | 'invoiceType';
  readonly required: { readonly type: string; readonly msg: string };
  readonly unknown: { readonly type: string; readonly msg: (value: string) => string };
}

const TERMINAL: MethodOption = {
  field: 'terminalId',
  required: { type: 'terminal_required', msg: 'a terminal method needs terminalId' },
  unknown: { type: 'unknown_terminal', msg: (id) => `no terminal ${id}` },
};

const INVOICE_TYPE: MethodOption = {
  field: 'invoiceType',
  required: { type: 'invoice_type_required', msg: 'an invoice method needs invoiceType' },
  unknown: { type: 'unknown_invoice_type', msg: (type) => `no invoice type ${type}` },
};

/**
 * The option's value in the body: present, and one the method offers (`offered` undefined:
 * the method takes any).
 */
function requireOffered(
  option: MethodOption,
  value: string | undefined,
  offered: readonly string[] | undefined,
): string {
  if (!value) throw businessError(loc(option.field), option.required.type, option.required.msg);
  if (offered && !offered.includes(value)) {
    throw businessError(loc(option.field), option.unknown.type, option.unknown.msg(value));
  }
  return value;
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
        payment.lastTerminalId = requireOffered(
          TERMINAL,
          body.terminalId,
          method.terminals?.map((terminal) => terminal.id) ?? [],
        );
        this.lifecycle.issue(payment, 'other');
        break;
      }
      case 'invoice': {
        requireOffered(INVOICE_TYPE, body.invoiceType, method.invoiceTypes);
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
