/**
 * Raw HTTP for the sandbox conformance tests: fetch and JSON, nothing from the shared zod
 * schemas, so that a mistake in a shared schema cannot hide a wrong answer.
 */
import type { SandboxHandle } from '../support/sandbox.js';

export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  organizationId?: string;
  headers?: Record<string, string>;
}

export async function call<T = Record<string, unknown>>(
  method: string,
  url: string,
  options: CallOptions = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.organizationId !== undefined) headers['x-organization-id'] = options.organizationId;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('application/json')) {
    parsed = JSON.parse(text);
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Control API calls (no auth). */
export function control<T = Record<string, unknown>>(
  sandbox: SandboxHandle,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer<T>> {
  return call<T>(method, `${sandbox.url}/sandbox${path}`, body === undefined ? {} : { body });
}

export interface Detail {
  loc: (string | number)[];
  msg: string;
  type: string;
}
export interface ValidationBody {
  detail: Detail[];
}
export interface ErrorBody {
  code: string;
  message: string;
}
export interface InstallmentRecord {
  id: string;
  date: string;
  type: string;
  grossAmount: number;
  status: string;
  numTried: number;
  successfullyChargedAt: string | null;
  numFailed: number;
  lastFailedAt: string | null;
}
export interface CreatedPayment {
  id: string;
  _links: { longGui: string; gui: string };
  installments: InstallmentRecord[] | null;
}
export interface PaymentStatusBody {
  totalAmount: number;
  installments: InstallmentRecord[] | null;
  paymentId: string;
  paymentNumber: number;
  paymentStatus: { paymentStatus: string };
  merchantId: string;
  createdAt: string;
  dueDate: string;
  files: { id: string; fileName: string; size: number }[];
  currency: string;
}

export interface PaymentOptions {
  total?: number;
  net?: number;
  currency?: string;
  installments?: { date: string; grossAmount: number }[];
  items?: Record<string, unknown>[];
  callback?: Record<string, unknown>;
  profileId?: string;
  paymentDepartment?: string;
  paymentMethodId?: string | null;
  internalRef?: string;
  orderNumber?: string;
}

/** A valid create-payment body (NOK 1249.50 gross, 999.60 net) with what a test changes. */
export function paymentBody(options: PaymentOptions = {}): Record<string, unknown> {
  const payment: Record<string, unknown> = {
    currency: options.currency ?? 'NOK',
    totalGrossAmount: options.total ?? 1249.5,
    totalNetAmount: options.net ?? 999.6,
    dueDate: '2030-01-31',
    internalRef: options.internalRef ?? 'SO-1',
  };
  if (options.installments) payment.installments = options.installments;
  if (options.items) payment.items = options.items;
  if (options.profileId !== undefined) payment.profileId = options.profileId;
  if (options.paymentDepartment !== undefined)
    payment.paymentDepartment = options.paymentDepartment;
  const body: Record<string, unknown> = {
    customer: {
      type: 'person',
      firstName: 'Kari',
      lastName: 'Nordmann',
      email: 'kari@example.com',
    },
    order: {
      orderNumber: options.orderNumber ?? 'SO-1',
      objects: [{ type: 'newCar', brand: 'Volvo', model: 'EX30' }],
    },
    payment,
  };
  if (options.callback) body.callback = options.callback;
  if (options.paymentMethodId !== undefined) body.paymentMethodId = options.paymentMethodId;
  return body;
}

export async function createPayment(
  sandbox: SandboxHandle,
  token: string,
  options: PaymentOptions = {},
  organizationId?: string,
): Promise<CreatedPayment> {
  const answer = await call<CreatedPayment>('POST', `${sandbox.url}/api/payments`, {
    token,
    body: paymentBody(options),
    ...(organizationId === undefined ? {} : { organizationId }),
  });
  if (answer.status !== 200) throw new Error(`create failed: ${answer.status} ${answer.text}`);
  return answer.body;
}

export function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
}

export async function tokenRequest<T = Record<string, unknown>>(
  sandbox: SandboxHandle,
  authorization: string | undefined,
  form: Record<string, string>,
): Promise<Answer<T>> {
  return call<T>('POST', `${sandbox.partnerUrl}/auth/token`, {
    body: new URLSearchParams(form).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(authorization === undefined ? {} : { authorization }),
    },
  });
}
