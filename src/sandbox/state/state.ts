/**
 * The sandbox's whole world, in memory: clients, tokens, organizations, payment methods,
 * payments with their installments, refunds and documents, and booked money movements.
 * Amounts are integer minor units here; they become JSON numbers only in views.ts.
 */
import {
  DEFAULT_PAYMENT_METHOD_ID,
  PAYFLOW_SCOPES,
  type PaymentMethod,
} from '../../payflow/wire/payflow.schemas.js';
import { BoundedStore } from './bounded-store.js';
import { DEFAULT_MAX_MOVEMENTS, MovementLedger } from './movement-ledger.js';
import {
  DEFAULT_SETTLEMENT_TIMING,
  SettlementBooking,
  type SettlementTiming,
} from '../settlement/booking.js';

export type { Movement } from './movement-ledger.js';

export const DEFAULT_CLIENT_ID = 'sandbox-client';
export const DEFAULT_CLIENT_SECRET = 'sandbox-secret';
export const DEFAULT_ORGANIZATION_ID = 'org-1';
export const DEFAULT_PROFILE_ID = 'profile-1';
export const DEFAULT_LINK_DOMAIN = 'pay.payflow.test';
export const DEFAULT_CURRENCY = 'NOK';
export const DEFAULT_WHITELIST = ['localhost', '127.0.0.1'] as const;
export const TERMINAL_METHOD_ID = '000000000000000000000001';
export const INVOICE_METHOD_ID = '000000000000000000000002';
export const DEFAULT_TERMINAL_ID = 'terminal-1';

export type PaymentStatus =
  'DRAFT' | 'OPENED' | 'INITIATED' | 'PENDING' | 'SUCCESS' | 'REJECTED' | 'PAID';
export type InstallmentStatus =
  'DRAFT' | 'CREATED' | 'SENT' | 'OPENED' | 'FAILED' | 'PENDING' | 'PAID' | 'CANCELLED';

export const FINAL_PAYMENT_STATUSES: ReadonlySet<PaymentStatus> = new Set([
  'SUCCESS',
  'REJECTED',
  'PAID',
]);
export const FINAL_INSTALLMENT_STATUSES: ReadonlySet<InstallmentStatus> = new Set([
  'PAID',
  'CANCELLED',
]);

export interface Client {
  clientId: string;
  clientSecret: string;
  scopes: string[];
  organizationIds: string[];
}

export interface AccessToken {
  clientId: string;
  scopes: ReadonlySet<string>;
  expiresAt: number;
}

export interface Profile {
  id: string;
  department?: string | undefined;
}

export interface Organization {
  id: string;
  name: string;
  profiles: Profile[];
  linkDomain: string;
  currency: string;
}

export interface Installment {
  id: string;
  date: string;
  type: 'initial' | 'scheduled';
  grossMinor: number;
  items: unknown[] | undefined;
  status: InstallmentStatus;
  numTried: number;
  successfullyChargedAt: number | null;
  numFailed: number;
  lastFailedAt: number | null;
  /** Bumped when the debit is rescheduled, so that stale debit jobs do nothing. */
  debitVersion: number;
}

export interface Refund {
  refundId: string;
  grossMinor: number;
  netMinor: number;
  refundType: 'full' | 'partial';
  remainingMinor: number;
  createdAt: number;
}

export interface PaymentDocument {
  id: string;
  paymentId: string;
  fileName: string;
  contentType: string;
  size: number;
  /** SHA-256 (hex) of the decoded content, so tests can check it arrived whole. */
  sha256: string;
  uploadedAt: number;
}

export interface Callback {
  url?: string | undefined;
  statusUpdateUrl?: string | undefined;
  terminalFailureUrl?: string | undefined;
  /** callback.api_key as sent in X-Api-Key (stringified), if any. */
  apiKey?: string | undefined;
}

export interface Payment {
  id: string;
  number: number;
  organizationId: string;
  clientId: string;
  /**
   * The create-payment body as received, as JSON text (one string rather than an object
   * graph per payment kept: less memory, less for the garbage collector to walk).
   */
  bodyJson: string;
  currency: string;
  totalMinor: number;
  netMinor: number;
  status: PaymentStatus;
  installments: Installment[] | null;
  refunds: Refund[];
  documents: Map<string, PaymentDocument>;
  createdAt: number;
  dueDate: string;
  internalRef: string | null;
  orderNumber: string;
  profileId: string | null;
  paymentMethodId: string;
  /**
   * Whether the payment was issued to the payer: its link sent at creation
   * (communication.send_payment_link, default true) or a re-send since. Until then its
   * installments are DRAFT.
   */
  issued: boolean;
  callback: Callback;
  lastTerminalId: string | null;
  manualPaidNote: string | null;
  terminalFailures: number;
}

/** Default SANDBOX_MAX_PAYMENTS: a 10,000-order fault campaign twice over, and then some. */
export const DEFAULT_MAX_PAYMENTS = 25_000;

/** What the sandbox keeps at most (docs/sandbox.md, "A long run"). */
export interface RetentionLimits {
  /** Payments kept; past it the oldest finished one (else the oldest) is forgotten. */
  readonly maxPayments: number;
  /** Settlement movements kept; past it the oldest booked dates are forgotten. */
  readonly maxMovements: number;
}

export const DEFAULT_RETENTION: RetentionLimits = {
  maxPayments: DEFAULT_MAX_PAYMENTS,
  maxMovements: DEFAULT_MAX_MOVEMENTS,
};

export function defaultPaymentMethods(): PaymentMethod[] {
  return [
    { id: DEFAULT_PAYMENT_METHOD_ID, name: 'Payment link', type: 'payment_link' },
    {
      id: TERMINAL_METHOD_ID,
      name: 'Card terminal',
      type: 'terminal',
      terminals: [
        { id: DEFAULT_TERMINAL_ID, name: 'Front desk' },
        { id: 'terminal-2', name: 'Workshop' },
      ],
    },
    {
      id: INVOICE_METHOD_ID,
      name: 'Invoice',
      type: 'invoice',
      invoiceTypes: ['email', 'ehf', 'paper'],
    },
  ];
}

export class SandboxState {
  readonly clients = new Map<string, Client>();
  readonly tokens = new Map<string, AccessToken>();
  readonly organizations = new Map<string, Organization>();
  /** Bounded (RetentionLimits.maxPayments): see bounded-store.ts. */
  readonly payments: BoundedStore<Payment>;
  /** Bounded (RetentionLimits.maxMovements): see movement-ledger.ts. */
  readonly movements: MovementLedger;
  /** When collected money is booked, and the tests' settlement controls (booking.ts). */
  readonly settlement: SettlementBooking;
  /**
   * Raw text lines of the settlement CSV (POST /sandbox/settlements), written as they are
   * after the rows of their date: organization id → booked date (YYYY-MM-DD) → lines.
   */
  readonly settlementMalformedLines = new Map<string, Map<string, string[]>>();
  paymentMethods: PaymentMethod[] = [];
  whitelist: string[] = [];
  nextPaymentNumber = 1000;

  /**
   * @param defaultWhitelist webhook domains whitelisted at start and after every reset.
   * @param defaultClientSecret the secret of `sandbox-client` at start and after every reset.
   * @param retention how many payments and settlement movements are kept at most.
   * @param settlementTiming the share of lines booked a night late, at start and after a reset.
   */
  constructor(
    private readonly defaultWhitelist: readonly string[] = DEFAULT_WHITELIST,
    private readonly defaultClientSecret: string = DEFAULT_CLIENT_SECRET,
    retention: RetentionLimits = DEFAULT_RETENTION,
    settlementTiming: SettlementTiming = DEFAULT_SETTLEMENT_TIMING,
  ) {
    this.payments = new BoundedStore<Payment>(retention.maxPayments, isFinalPayment);
    this.movements = new MovementLedger(retention.maxMovements);
    this.settlement = new SettlementBooking(settlementTiming);
    this.reset();
  }

  reset(): void {
    this.clients.clear();
    this.tokens.clear();
    this.organizations.clear();
    this.payments.clear();
    this.movements.clear();
    this.settlement.reset();
    this.settlementMalformedLines.clear();
    this.nextPaymentNumber = 1000;
    this.paymentMethods = defaultPaymentMethods();
    this.whitelist = [...this.defaultWhitelist];
    this.organizations.set(DEFAULT_ORGANIZATION_ID, {
      id: DEFAULT_ORGANIZATION_ID,
      name: 'Sandbox Organization',
      profiles: [{ id: DEFAULT_PROFILE_ID, department: 'sales' }],
      linkDomain: DEFAULT_LINK_DOMAIN,
      currency: DEFAULT_CURRENCY,
    });
    this.clients.set(DEFAULT_CLIENT_ID, {
      clientId: DEFAULT_CLIENT_ID,
      clientSecret: this.defaultClientSecret,
      scopes: Object.values(PAYFLOW_SCOPES),
      organizationIds: [DEFAULT_ORGANIZATION_ID],
    });
  }

  /** Appends raw settlement CSV lines to an organization's date. */
  addMalformedSettlementLines(
    organizationId: string,
    date: string,
    lines: readonly string[],
  ): void {
    if (lines.length === 0) return;
    let byDate = this.settlementMalformedLines.get(organizationId);
    if (!byDate) {
      byDate = new Map();
      this.settlementMalformedLines.set(organizationId, byDate);
    }
    const existing = byDate.get(date);
    if (!existing) byDate.set(date, [...lines]);
    else for (const line of lines) existing.push(line);
  }

  /** An organization's raw settlement CSV lines by booked date (empty when none). */
  malformedSettlementLines(organizationId: string): ReadonlyMap<string, readonly string[]> {
    return this.settlementMalformedLines.get(organizationId) ?? new Map<string, string[]>();
  }

  findPaymentMethod(id: string): PaymentMethod | undefined {
    return this.paymentMethods.find((method) => method.id === id);
  }
}

export function isFinalPayment(payment: Payment): boolean {
  return FINAL_PAYMENT_STATUSES.has(payment.status);
}

export function isFinalInstallment(installment: Installment): boolean {
  return FINAL_INSTALLMENT_STATUSES.has(installment.status);
}
