/**
 * Payflow's list of payment methods changes over time (spec: "clients fetch it
 * dynamically"): it is cached per organization for a short time and fetched again once
 * when an id is not in it, so a method added at Payflow is found at once while a burst
 * of events does not turn into a burst of list calls.
 */
import { Inject, Injectable } from '@nestjs/common';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';
import { DEFAULT_PAYMENT_METHOD_ID } from '../../payflow/wire/payflow.schemas.js';
import { ORDERS_OPTIONS, type OrdersOptions } from '../orders.options.js';
import { mappingFailed } from './order-amounts.js';

interface CachedList {
  readonly ids: ReadonlySet<string>;
  readonly fetchedAt: number;
}

/** A miss refetches at most this often per organization. */
export const MIN_REFRESH_INTERVAL_MS = 1_000;

@Injectable()
export class PaymentMethodCatalog {
  private readonly lists = new Map<string, CachedList>();
  private readonly inFlight = new Map<string, Promise<CachedList>>();
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    @Inject(PayflowClient) private readonly payflow: PayflowApi,
    @Inject(ORDERS_OPTIONS) options: Pick<OrdersOptions, 'paymentMethodsTtlMs'>,
  ) {
    this.ttlMs = options.paymentMethodsTtlMs;
    this.now = () => performance.now();
  }

  /**
   * Resolves when `paymentMethodId` is usable in `organizationId`; throws
   * MappingFailedError (ORDER.UNKNOWN_PAYMENT_METHOD, naming the id) when Payflow does not
   * list it, and Payflow's own error when the list cannot be fetched.
   */
  async assertKnown(paymentMethodId: string, organizationId: string | null): Promise<void> {
    if (paymentMethodId === DEFAULT_PAYMENT_METHOD_ID) return;
    const key = organizationId ?? '';
    let list = this.lists.get(key);
    if (list === undefined || this.now() - list.fetchedAt >= this.ttlMs) {
      list = await this.refresh(key, organizationId);
    }
    if (list.ids.has(paymentMethodId)) return;
    if (this.now() - list.fetchedAt >= MIN_REFRESH_INTERVAL_MS) {
      list = await this.refresh(key, organizationId);
      if (list.ids.has(paymentMethodId)) return;
    }
    throw mappingFailed(
      'ORDER.UNKNOWN_PAYMENT_METHOD',
      `payment method "${paymentMethodId}" is not in Payflow's list of payment methods${
        organizationId === null ? '' : ` for organization ${organizationId}`
      }`,
    );
  }

  /** Forgets every cached list. */
  clear(): void {
    this.lists.clear();
  }

  private refresh(key: string, organizationId: string | null): Promise<CachedList> {
    const running = this.inFlight.get(key);
    if (running !== undefined) return running;
    const fetching = (async () => {
      try {
        const methods = await this.payflow.listPaymentMethods(
          organizationId === null ? {} : { organizationId },
        );
        const list: CachedList = {
          ids: new Set(methods.map((method) => method.id)),
          fetchedAt: this.now(),
        };
        this.lists.set(key, list);
        return list;
      } finally {
        this.inFlight.delete(key);
      }
    })();
    this.inFlight.set(key, fetching);
    return fetching;
  }
}
