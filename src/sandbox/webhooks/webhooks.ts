/**
 * Webhook delivery by the spec's rules: https only, whitelisted domains only, checked
 * before every attempt (a skipped webhook is still recorded, with the reason), 2xx = delivered, anything else (including a
 * connection error or the 10 s time-out) is retried up to 25 times on the back-off table,
 * on the virtual clock. The first attempt is made at once; retries are scheduler jobs.
 *
 * For tests: deliveries of a payment can be held back and released one by one (to deliver
 * out of order), and any delivery can be sent again (to deliver one webhook twice).
 *
 * At most `maxDeliveries` are kept (bounded-store.ts): past it the oldest finished one
 * (delivered, given up or skipped), else the oldest, is forgotten with its retries. They
 * are listed a page at a time, and a payment's deliveries are found by an index.
 */
import { request, type Agent } from 'undici';
import type { AppLogger } from '../../logging/logger.js';
import type { WebhookKind } from '../../payflow/wire/payflow.schemas.js';
import { BoundedStore, type Page } from '../state/bounded-store.js';
import { isoOf, type VirtualClock } from '../state/clock.js';
import { conflict, notFound } from '../http/errors.js';
import { newObjectId } from '../state/ids.js';
import type { Scheduler } from '../state/scheduler.js';
import { isWhitelisted } from './whitelist.js';

/** Wait before retry n (1-based), in minutes: 5×5, 5×15, 5×30, 5×60, 5×24 h = 7750 minutes. */
export const RETRY_BACKOFF_MINUTES: readonly number[] = [5, 15, 30, 60, 1440].flatMap((wait) =>
  Array.from({ length: 5 }, () => wait),
);
/** Default SANDBOX_MAX_WEBHOOK_DELIVERIES. */
export const DEFAULT_MAX_WEBHOOK_DELIVERIES = 20_000;

export type SkipReason = 'invalid_url' | 'not_https' | 'not_whitelisted';
/** A webhook body as shapes.ts writes it (the spec shows no payload shape). */
export type SandboxWebhookPayload = Record<string, unknown>;

export interface Attempt {
  at: number;
  /** HTTP status, or 0 for a connection error or time-out. */
  status: number;
  error?: string;
}

export interface Delivery {
  /** The sandbox's record id; equals payload.deliveryId except for re-deliveries. */
  id: string;
  /** Increasing with creation: the listing cursor. */
  number: number;
  deliveryId: string;
  paymentId: string;
  url: string;
  kind: WebhookKind;
  /** The body as sent (JSON text: one string, not an object graph, for each delivery kept). */
  payloadJson: string;
  apiKey: string | undefined;
  createdAt: number;
  attempts: Attempt[];
  delivered: boolean;
  givenUp: boolean;
  skipped: SkipReason | undefined;
  held: boolean;
  nextAttemptAt: number | null;
  redeliveryOf: string | undefined;
  /** The first attempt while it is in flight. */
  pending: Promise<void> | undefined;
}

export interface EnqueueInput {
  kind: WebhookKind;
  url: string;
  apiKey: string | undefined;
  paymentId: string;
  at: number;
  payload: (deliveryId: string) => SandboxWebhookPayload;
}

export interface WebhookDispatcherOptions {
  clock: VirtualClock;
  agent: Agent;
  logger: AppLogger;
  timeoutMs: number;
  whitelist: () => readonly string[];
  schedule: Scheduler['schedule'];
  /** Drops the scheduled retries of a forgotten delivery (Scheduler.cancel). */
  cancel: (owner: string) => void;
  /** Deliveries kept at most. Default DEFAULT_MAX_WEBHOOK_DELIVERIES. */
  maxDeliveries?: number;
}

export interface DeliveryFilter {
  paymentId?: string | undefined;
  kind?: string | undefined;
}

export class WebhookDispatcher {
  private readonly deliveries: BoundedStore<Delivery>;
  /** The kept deliveries of each payment, oldest first. */
  private readonly byPayment = new Map<string, Delivery[]>();
  private readonly holds = new Set<string>();
  private readonly inflight = new Set<Promise<void>>();
  private generation = 0;
  private nextNumber = 1;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.deliveries = new BoundedStore<Delivery>(
      options.maxDeliveries ?? DEFAULT_MAX_WEBHOOK_DELIVERIES,
      (delivery) =>
        delivery.pending === undefined &&
        (delivery.delivered || delivery.givenUp || delivery.skipped !== undefined),
    );
    this.deliveries.onForget((delivery) => this.forgotten(delivery));
  }

  /** Deliveries kept. */
  get size(): number {
    return this.deliveries.size;
  }

  /** Deliveries kept at most. */
  get limit(): number {
    return this.deliveries.limit;
  }

  enqueue(input: EnqueueInput): Delivery {
    const id = newObjectId(input.at);
    const delivery: Delivery = {
      id,
      number: this.nextNumber++,
      deliveryId: id,
      paymentId: input.paymentId,
      url: input.url,
      kind: input.kind,
      payloadJson: JSON.stringify(input.payload(id)),
      apiKey: input.apiKey,
      createdAt: input.at,
      attempts: [],
      delivered: false,
      givenUp: false,
      skipped: this.skipReason(input.url),
      held: false,
      nextAttemptAt: null,
      redeliveryOf: undefined,
      pending: undefined,
    };
    this.keep(delivery);
    if (delivery.skipped) return delivery;
    if (this.holds.has(input.paymentId)) {
      delivery.held = true;
      return delivery;
    }
    this.startAttempt(delivery, input.at);
    return delivery;
  }

  /** Resolves when every first attempt in flight has finished (retries are scheduled by then). */
  async settle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** Resolves when the first attempts of these deliveries have finished. */
  async settleAll(deliveries: readonly Delivery[]): Promise<void> {
    await Promise.allSettled(
      deliveries.flatMap((delivery) => (delivery.pending ? [delivery.pending] : [])),
    );
  }

  /**
   * A page of the kept deliveries, oldest first, after `cursor` (a delivery's number). With
   * a paymentId only that payment's deliveries are looked at (an index).
   */
  page(filter: DeliveryFilter, cursor: string | undefined, limit: number): Page<Delivery> {
    const ofKind = (delivery: Delivery): boolean =>
      filter.kind === undefined || delivery.kind === filter.kind;
    if (filter.paymentId === undefined) return this.deliveries.page(cursor, limit, ofKind);
    const after = cursor === undefined ? 0 : Number(cursor);
    const items: Delivery[] = [];
    let last: Delivery | undefined;
    let more = false;
    for (const delivery of this.byPayment.get(filter.paymentId) ?? []) {
      if (delivery.number <= after || !ofKind(delivery)) continue;
      if (items.length >= limit) {
        more = true;
        break;
      }
      items.push(delivery);
      last = delivery;
    }
    return { items, nextCursor: more && last ? String(last.number) : null };
  }

  setHold(paymentId: string, enabled: boolean): void {
    if (enabled) this.holds.add(paymentId);
    else this.holds.delete(paymentId);
  }

  /** Makes the first attempt of a held delivery now; its retries follow as usual. */
  async release(id: string): Promise<Delivery> {
    const delivery = this.get(id);
    if (!delivery.held) throw conflict(`webhook delivery ${id} is not held`);
    delivery.held = false;
    this.startAttempt(delivery, this.options.clock.now());
    await delivery.pending;
    return delivery;
  }

  /** Sends a delivery's payload again (same deliveryId) as a new delivery with its own retries. */
  async redeliver(id: string): Promise<Delivery> {
    const original = this.get(id);
    if (original.skipped) {
      throw conflict(`webhook delivery ${id} was skipped (${original.skipped})`);
    }
    const at = this.options.clock.now();
    const copy: Delivery = {
      ...original,
      id: newObjectId(at),
      number: this.nextNumber++,
      createdAt: at,
      attempts: [],
      delivered: false,
      givenUp: false,
      held: false,
      nextAttemptAt: null,
      redeliveryOf: original.id,
      pending: undefined,
    };
    this.keep(copy);
    this.startAttempt(copy, at);
    await copy.pending;
    return copy;
  }

  reset(): void {
    this.generation++;
    this.deliveries.clear();
    this.byPayment.clear();
    this.holds.clear();
    this.inflight.clear();
  }

  private keep(delivery: Delivery): void {
    const ofPayment = this.byPayment.get(delivery.paymentId);
    if (ofPayment) ofPayment.push(delivery);
    else this.byPayment.set(delivery.paymentId, [delivery]);
    this.deliveries.add(delivery);
  }

  /** A delivery forgotten to keep the bound: out of the index, its retries dropped. */
  private forgotten(delivery: Delivery): void {
    const ofPayment = this.byPayment.get(delivery.paymentId);
    if (ofPayment) {
      const rest = ofPayment.filter((entry) => entry !== delivery);
      if (rest.length > 0) this.byPayment.set(delivery.paymentId, rest);
      else this.byPayment.delete(delivery.paymentId);
    }
    this.options.cancel(delivery.id);
  }

  private isKept(delivery: Delivery): boolean {
    return this.deliveries.get(delivery.id) === delivery;
  }

  private get(id: string): Delivery {
    const delivery = this.deliveries.get(id);
    if (!delivery) throw notFound(`no webhook delivery ${id}`);
    return delivery;
  }

  private startAttempt(delivery: Delivery, at: number): void {
    const pending = this.attempt(delivery, at, this.generation).finally(() => {
      this.inflight.delete(pending);
      if (delivery.pending === pending) delivery.pending = undefined;
    });
    delivery.pending = pending;
    this.inflight.add(pending);
  }

  private async attempt(delivery: Delivery, at: number, generation: number): Promise<void> {
    if (generation !== this.generation || !this.isKept(delivery)) return;
    delivery.nextAttemptAt = null;
    // The operator may have changed the whitelist since the delivery was queued: it is
    // read again before every attempt, and a domain no longer on it is not called again.
    const skipped = this.skipReason(delivery.url);
    if (skipped) {
      delivery.skipped = skipped;
      this.options.logger.debug(
        { deliveryId: delivery.id, reason: skipped, attempts: delivery.attempts.length },
        'webhook skipped',
      );
      return;
    }
    const outcome = await this.send(delivery);
    if (generation !== this.generation || !this.isKept(delivery)) return;
    delivery.attempts.push(
      outcome.error === undefined ? { at, status: outcome.status } : { at, ...outcome },
    );
    if (outcome.status >= 200 && outcome.status < 300) {
      delivery.delivered = true;
      return;
    }
    const retry = delivery.attempts.length; // the number of the retry to come, 1-based
    const waitMinutes = RETRY_BACKOFF_MINUTES[retry - 1];
    if (waitMinutes === undefined) {
      delivery.givenUp = true;
      this.options.logger.warn(
        { deliveryId: delivery.id, kind: delivery.kind, attempts: delivery.attempts.length },
        'webhook given up',
      );
      return;
    }
    const dueAt = at + waitMinutes * 60_000;
    delivery.nextAttemptAt = dueAt;
    this.options.schedule(dueAt, (time) => this.attempt(delivery, time, generation), delivery.id);
  }

  private async send(delivery: Delivery): Promise<{ status: number; error?: string }> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'payflow-sandbox',
      'x-payflow-delivery': delivery.deliveryId,
    };
    if (delivery.apiKey !== undefined) headers['x-api-key'] = delivery.apiKey;
    try {
      const response = await request(delivery.url, {
        method: 'POST',
        headers,
        body: delivery.payloadJson,
        dispatcher: this.options.agent,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await response.body.dump();
      this.options.logger.debug(
        { deliveryId: delivery.id, status: response.statusCode },
        'webhook attempt',
      );
      return { status: response.statusCode };
    } catch (error) {
      const message = describeSendError(error);
      this.options.logger.debug(
        { deliveryId: delivery.id, error: message },
        'webhook attempt failed',
      );
      return { status: 0, error: message };
    }
  }

  private skipReason(url: string): SkipReason | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'invalid_url';
    }
    if (parsed.protocol !== 'https:') return 'not_https';
    return isWhitelisted(parsed.hostname, this.options.whitelist()) ? undefined : 'not_whitelisted';
  }
}

function describeSendError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${typeof code === 'string' ? code : error.name}: ${error.message}${cause}`;
  }
  return String(error);
}

export function deliveryView(delivery: Delivery) {
  return {
    id: delivery.id,
    deliveryId: delivery.deliveryId,
    paymentId: delivery.paymentId,
    url: delivery.url,
    kind: delivery.kind,
    payload: JSON.parse(delivery.payloadJson) as SandboxWebhookPayload,
    createdAt: isoOf(delivery.createdAt),
    attempts: delivery.attempts.map((attempt) => ({ ...attempt, at: isoOf(attempt.at) })),
    delivered: delivery.delivered,
    givenUp: delivery.givenUp,
    ...(delivery.skipped ? { skipped: delivery.skipped } : {}),
    held: delivery.held,
    nextAttemptAt: delivery.nextAttemptAt === null ? null : isoOf(delivery.nextAttemptAt),
    ...(delivery.redeliveryOf ? { redeliveryOf: delivery.redeliveryOf } : {}),
  };
}
