/**
 * The payer, played in the Payflow sandbox's control API: once payflow-bridge has created
 * a payment (its `payment.created` names Payflow's id), the payer pays it
 * (`POST /sandbox/payments/{id}/simulate`), and the sandbox sends the payment's webhooks
 * to the callback URLs the worker gave it: `https://127.0.0.1:<port>/webhooks/payflow/…`,
 * over TLS with the certificate the demo made. The worker stores each webhook, asks
 * Payflow for the payment's status and publishes what changed (`payment.status_changed`,
 * `installment.status_changed`), which the demo reads back like any downstream system.
 *
 * Nothing secret is kept: a webhook's URL (its token) and body (its api key) stay in the
 * sandbox; the demo keeps each webhook's kind and answer only.
 */
import { z } from 'zod';

/** What the payer does to an order's payment (a subset of the sandbox's simulate actions). */
export type PayerAction = 'paid' | 'installment_paid';

/** An order's payer step (scenario.ts). */
export interface PayerStep {
  readonly action: PayerAction;
}

/** How one webhook went: its kind and the worker's answer to its first attempt. */
export interface WebhookResult {
  readonly kind: string;
  readonly delivered: boolean;
  /** HTTP status of the first attempt; 0 for a connection or TLS error; null when none. */
  readonly status: number | null;
  /** Why the sandbox did not send it (`not_https`, `not_whitelisted`), or its error. */
  readonly problem: string | null;
}

/** What the payer paid, for the screen and for the night's settlement file. */
export interface Paid {
  readonly orderId: string;
  readonly action: PayerAction;
  readonly paymentId: string;
  /** Payflow's id of the installment paid, or null for a payment paid in full. */
  readonly installmentId: string | null;
  /** The installment's ref in the ERP's plan ('1'), or null. */
  readonly installmentRef: string | null;
  /** Major units, exact decimal text. */
  readonly amount: string;
  readonly currency: string;
  readonly webhooks: readonly WebhookResult[];
}

/** The fields of the order's payment.created that the payer needs. */
export interface CreatedPayment {
  readonly orderId: string;
  readonly paymentId: string;
  readonly data: Readonly<Record<string, unknown>>;
}

const attemptSchema = z.object({ status: z.number(), error: z.string().optional() });
const deliverySchema = z.object({
  kind: z.string(),
  delivered: z.boolean(),
  skipped: z.string().optional(),
  attempts: z.array(attemptSchema),
});
const simulateAnswerSchema = z.object({
  payment: z
    .object({
      id: z.string(),
      status: z.string(),
      installments: z
        .array(z.object({ id: z.string(), successfullyChargedAt: z.string().nullable() }))
        .nullable(),
    })
    .nullable(),
  deliveries: z.array(deliverySchema),
});

const plannedInstallmentSchema = z.object({ installmentRef: z.string(), amount: z.string() });

/**
 * The payer pays `created`'s payment in the sandbox: in full (`paid`) or its first open
 * installment (`installment_paid`). Resolves once the sandbox has made the first attempt of
 * every webhook the change sent; throws with the sandbox's answer when it refuses.
 */
export async function payerPays(
  sandboxUrl: string,
  step: PayerStep,
  created: CreatedPayment,
): Promise<Paid> {
  const answer = await sandboxJson(
    `${sandboxUrl}/sandbox/payments/${encodeURIComponent(created.paymentId)}/simulate`,
    { action: step.action },
  );
  const parsed = simulateAnswerSchema.safeParse(answer);
  if (!parsed.success || parsed.data.payment === null) {
    throw new Error(`the sandbox's answer to simulate ${step.action} is not what the demo expects`);
  }
  const { payment, deliveries } = parsed.data;
  const currency = text(created.data['currency']);
  const webhooks = deliveries.map(webhookResult);
  if (step.action === 'paid') {
    return {
      orderId: created.orderId,
      action: step.action,
      paymentId: payment.id,
      installmentId: null,
      installmentRef: null,
      amount: text(created.data['totalGrossAmount']),
      currency,
      webhooks,
    };
  }
  // installment_paid charges the first open installment: the first one charged now.
  const charged = (payment.installments ?? []).findIndex(
    (installment) => installment.successfullyChargedAt !== null,
  );
  const planned = z.array(plannedInstallmentSchema).safeParse(created.data['installments']);
  const plan = planned.success ? planned.data : [];
  const installment = payment.installments?.[charged];
  const ref = plan[charged];
  if (installment === undefined || ref === undefined) {
    throw new Error(`the sandbox charged no installment of ${created.orderId}'s payment`);
  }
  return {
    orderId: created.orderId,
    action: step.action,
    paymentId: payment.id,
    installmentId: installment.id,
    installmentRef: ref.installmentRef,
    amount: ref.amount,
    currency,
    webhooks,
  };
}

/** What the screen says the payer did, e.g. "pays 550940.50 NOK in full". */
export function describePaid(paid: Paid): string {
  return paid.installmentRef === null
    ? `pays ${paid.amount} ${paid.currency} in full`
    : `pays installment ${paid.installmentRef}, ${paid.amount} ${paid.currency}`;
}

function webhookResult(delivery: z.output<typeof deliverySchema>): WebhookResult {
  const first = delivery.attempts[0];
  return {
    kind: delivery.kind,
    delivered: delivery.delivered,
    status: first?.status ?? null,
    // An error names no URL (its path holds the payment's webhook token), but be sure.
    problem: delivery.skipped ?? first?.error?.replace(/\/webhooks\/\S*/g, '/webhooks/…') ?? null,
  };
}

/** POSTs `body` to the sandbox's control API and returns its JSON answer (2xx only). */
export async function sandboxJson(url: string, body: unknown, method = 'POST'): Promise<unknown> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
  const answer = await response.text();
  if (!response.ok) {
    const path = new URL(url).pathname;
    throw new Error(
      `${method} ${path} answered ${response.status}: ${answer.slice(0, 300) || '(empty)'}`,
    );
  }
  return answer === '' ? null : (JSON.parse(answer) as unknown);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '?';
}
