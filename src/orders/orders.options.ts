/**
 * Settings of the order pipeline. Defaults come from the validated configuration; tests
 * and tools override single fields through `OrdersModule.forRoot({ … })`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { AppConfig } from '../config/app-config.js';

export const ORDERS_OPTIONS = Symbol('ORDERS_OPTIONS');
export const ORDERS_OPTION_OVERRIDES = Symbol('ORDERS_OPTION_OVERRIDES');

export interface OrdersOptions {
  /** Owner of this worker's command attempts; unique per process. */
  readonly workerId: string;
  /**
   * How long a started attempt belongs to its worker. Longer than any Payflow call can
   * last (PAYFLOW_REQUEST_TIMEOUT + margin): an attempt still `started` after it is in doubt.
   */
  readonly attemptLeaseMs: number;
  /** Deadline of one Payflow call made by a command: it ends before the lease. */
  readonly callDeadlineMs: number;
  /**
   * PAYFLOW_LATE_EFFECT_WINDOW: how long after its latest request left a call may still be
   * applied by Payflow. A read showing it not applied is trusted only after that.
   */
  readonly lateEffectWindowMs: number;
  /** WEBHOOK_PUBLIC_BASE_URL, without a trailing slash. */
  readonly webhookBaseUrl: string;
  /** How long the list of payment methods is trusted (per organization). Default 60 s. */
  readonly paymentMethodsTtlMs: number;
}

/** Default margin between the Payflow request time-out and the end of an attempt's lease. */
export const DEFAULT_LEASE_MARGIN_MS = 5_000;

export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export function ordersOptionsFromConfig(
  config: Pick<
    AppConfig,
    'PAYFLOW_REQUEST_TIMEOUT' | 'PAYFLOW_LATE_EFFECT_WINDOW' | 'WEBHOOK_PUBLIC_BASE_URL'
  >,
  overrides: Partial<OrdersOptions> & { leaseMarginMs?: number } = {},
): OrdersOptions {
  const { leaseMarginMs = DEFAULT_LEASE_MARGIN_MS, ...rest } = overrides;
  const attemptLeaseMs = rest.attemptLeaseMs ?? config.PAYFLOW_REQUEST_TIMEOUT + leaseMarginMs;
  return {
    workerId: newWorkerId(),
    attemptLeaseMs,
    // Half the margin is left for recording the outcome before the lease ends.
    callDeadlineMs: Math.max(1, attemptLeaseMs - Math.ceil(leaseMarginMs / 2)),
    lateEffectWindowMs: config.PAYFLOW_LATE_EFFECT_WINDOW,
    webhookBaseUrl: config.WEBHOOK_PUBLIC_BASE_URL.replace(/\/+$/, ''),
    paymentMethodsTtlMs: 60_000,
    ...rest,
  };
}
