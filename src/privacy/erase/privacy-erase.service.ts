/**
 * `privacy erase` and the retention job (CONTRACT §10): every copy of personal data the
 * bridge holds for some orders is removed, keeping ids, amounts, states and the order of
 * events. Reads top to bottom:
 *
 *   the orders of the selection → one transaction: for each order, lock it, read every
 *   store that can hold its personal data, decide what each row becomes (erase-rows.ts),
 *   write the rows that change → record the erasure (privacy_erasures) when anything changed
 *
 * One transaction for the whole request: an erasure happens whole or not at all. The order
 * row is locked first, as the dead-letter sink and the replay lock it, so no dead letter of
 * the order is written or replayed half-way through.
 *
 * Refused (PRIVACY.REPLAY_PENDING, nothing changed) while an order has replayed events
 * waiting in the outbox for TOPIC_ORDERS: erased, they would reach the pipeline as events
 * with "[erased]" in them. They leave within seconds; the erasure is then asked again.
 */
import { AppError } from '../../errors/app-error.js';
import type { Database, Sql } from '../../database/database.js';
import type { PersonalDataStores } from '../personal-data-stores.js';
import { ERASED } from '../personal-json.js';
import { ordersOf } from '../privacy-orders.js';
import type {
  ErasureRecord,
  ErasureScope,
  ErasureTrigger,
  PrivacyErasureRepository,
} from '../privacy-erasure.repository.js';
import { selectionSubject, type PrivacySelection } from '../privacy-selection.js';
import { eraseLetter, eraseOutboxRow, eraseWebhook, erasedValuesOf } from './erase-rows.js';

/** Rows changed per store. */
export type ErasureCounts = {
  /** Dead letters (value, error, headers, discard reason). */
  deadLetters: number;
  /** Outbox rows keyed by the order: status events, `.dlq` copies, replayed events. */
  outbox: number;
  /** Stored webhooks (body, headers). */
  webhooks: number;
  /** Orders' customer numbers. */
  customerNumbers: number;
  /** Payments' payment links. */
  paymentLinks: number;
  /** Documents' file names. */
  documentNames: number;
  /** Unexplained effects' file names. */
  effectFileNames: number;
};

export const NO_CHANGES: Readonly<ErasureCounts> = {
  deadLetters: 0,
  outbox: 0,
  webhooks: 0,
  customerNumbers: 0,
  paymentLinks: 0,
  documentNames: 0,
  effectFileNames: 0,
};

export interface ErasureOutcome {
  /** The orders covered. */
  readonly orderIds: readonly string[];
  readonly counts: Readonly<ErasureCounts>;
  /** Rows changed, all stores together: 0 when there was nothing left to erase. */
  readonly changed: number;
  /** This erasure's record, when it changed something. */
  readonly record: ErasureRecord | null;
  /** When it changed nothing: the latest erasure that covered the same, if any. */
  readonly previous: ErasureRecord | null;
}

/** An erasure that cannot be done now: nothing changed. */
export class ErasureRefusedError extends AppError {
  readonly transient = true;
  readonly code = 'PRIVACY.REPLAY_PENDING';
  constructor(readonly orderId: string) {
    super(
      `order ${orderId} has replayed events waiting in the outbox to be published; nothing ` +
        'was erased: ask again once they are published (seconds, while the worker runs)',
      { metadata: { orderId } },
    );
  }
}

export interface PrivacyEraseOptions {
  /** TOPIC_ORDERS: a replayed event waiting for it refuses the erasure of its order. */
  readonly ordersTopic: string;
}

export interface ErasureRequest {
  readonly selection: PrivacySelection;
  readonly erasedBy: string;
}

export class PrivacyEraseService {
  constructor(
    private readonly database: Database,
    private readonly stores: PersonalDataStores,
    private readonly erasures: PrivacyErasureRepository,
    private readonly options: PrivacyEraseOptions,
  ) {}

  /** A person's erasure of an order's or a customer's personal data. */
  async erase(request: ErasureRequest): Promise<ErasureOutcome> {
    const { selection } = request;
    const subject = selectionSubject(selection);
    const orderIds = await ordersOf(this.database.sql, this.stores, selection);
    const outcome = await this.database.transaction(async (tx) => {
      const counts = { ...NO_CHANGES };
      for (const orderId of orderIds) {
        await this.stores.orders.lock(tx, orderId);
        if (await this.replayPending(tx, orderId)) throw new ErasureRefusedError(orderId);
        const changed = await this.eraseOrder(tx, orderId, counts);
        if (changed > 0) await this.stores.orders.markPersonalDataErased(tx, orderId);
      }
      return this.record(tx, counts, orderIds, {
        erasedBy: request.erasedBy,
        trigger: 'operator',
        scope: selection.kind,
        subject,
      });
    });
    if (outcome.changed > 0) return outcome;
    const previous = await this.erasures.latest(
      this.database.sql,
      selection.kind,
      subject,
      orderIds,
    );
    return { ...outcome, previous };
  }

  /**
   * The retention's erasure of some orders and key-less dead letters, in one transaction.
   * An order with replayed events waiting is left for the next run. Every order taken is
   * marked erased, changed or not, so the next run takes it only once touched again.
   */
  async eraseForRetention(
    orderIds: readonly string[],
    keylessLetterIds: readonly string[],
    cutoff: Date,
  ): Promise<ErasureOutcome> {
    return this.database.transaction(async (tx) => {
      const counts = { ...NO_CHANGES };
      const taken: string[] = [];
      for (const orderId of orderIds) {
        await this.stores.orders.lock(tx, orderId);
        if (await this.replayPending(tx, orderId)) continue;
        await this.eraseOrder(tx, orderId, counts);
        await this.stores.orders.markPersonalDataErased(tx, orderId);
        taken.push(orderId);
      }
      await this.eraseKeyless(tx, keylessLetterIds, counts);
      return this.record(tx, counts, taken, {
        erasedBy: 'retention',
        trigger: 'retention',
        scope: 'retention',
        subject: `before ${cutoff.toISOString()}`,
      });
    });
  }

  /** Whether a replayed event of the order still waits in the outbox for TOPIC_ORDERS. */
  private replayPending(tx: Sql, orderId: string): Promise<boolean> {
    return this.stores.outbox.hasPending(tx, orderId, this.options.ordersTopic);
  }

  /** Erases one order's personal data in every store; adds to `counts`, returns rows changed. */
  private async eraseOrder(tx: Sql, orderId: string, counts: ErasureCounts): Promise<number> {
    const { stores } = this;
    const order = await stores.orders.personalDataOf(tx, orderId);
    const letters = await stores.letters.personalDataOf(tx, orderId, true);
    const outbox = await stores.outbox.personalDataOf(tx, orderId, true);
    const webhooks = await stores.webhooks.personalDataOf(tx, orderId, true);
    const payments = await stores.payments.personalDataOf(tx, orderId);
    const documents = await stores.documents.personalDataOf(tx, orderId);
    const effects = await stores.effects.personalDataOf(tx, orderId);

    // Every value erased anywhere in the order: what quotes it elsewhere is swept of it.
    const erased = erasedValuesOf(
      [
        ...letters.map((letter) => letter.value),
        ...outbox.map((row) => row.value),
        ...webhooks.map((row) => row.body),
      ],
      [
        order?.customerNumber ?? null,
        ...payments.map((payment) => payment.paymentLink),
        ...documents.map((document) => document.fileName),
        ...effects.map((effect) => effect.fileName),
      ],
    );

    let changed = 0;
    for (const letter of letters) {
      const next = eraseLetter(letter, erased);
      if (next === null) continue;
      await stores.letters.writeErased(tx, next);
      counts.deadLetters += 1;
      changed += 1;
    }
    for (const row of outbox) {
      const next = eraseOutboxRow(row, erased);
      if (next === null) continue;
      await stores.outbox.writeErased(tx, next);
      counts.outbox += 1;
      changed += 1;
    }
    for (const row of webhooks) {
      const next = eraseWebhook(row, erased);
      if (next === null) continue;
      await stores.webhooks.writeErased(tx, next);
      counts.webhooks += 1;
      changed += 1;
    }
    const columns: [keyof ErasureCounts, number][] = [
      ['customerNumbers', await stores.orders.eraseCustomerNumber(tx, orderId)],
      ['paymentLinks', await stores.payments.erasePaymentLinks(tx, orderId)],
      ['documentNames', await stores.documents.eraseFileNames(tx, orderId, ERASED)],
      ['effectFileNames', await stores.effects.eraseFileNames(tx, orderId, ERASED)],
    ];
    for (const [store, n] of columns) {
      counts[store] += n;
      changed += n;
    }
    return changed;
  }

  /** Dead letters without an order id: each erased with what its own value holds. */
  private async eraseKeyless(
    tx: Sql,
    ids: readonly string[],
    counts: ErasureCounts,
  ): Promise<void> {
    if (ids.length === 0) return;
    for (const letter of await this.stores.letters.lockPersonalData(tx, ids)) {
      const next = eraseLetter(letter, erasedValuesOf([letter.value]));
      // Marked erased even when nothing in it was personal: the retention is done with it.
      await this.stores.letters.writeErased(tx, {
        ...(next ?? {
          id: letter.id,
          value: letter.value,
          error: letter.error,
          headers: letter.headers,
          discardReason: letter.discardReason,
        }),
        eventErased: true,
      });
      if (next !== null) counts.deadLetters += 1;
    }
  }

  private async record(
    tx: Sql,
    counts: ErasureCounts,
    orderIds: readonly string[],
    about: {
      erasedBy: string;
      trigger: ErasureTrigger;
      scope: ErasureScope;
      subject: string;
    },
  ): Promise<ErasureOutcome> {
    const changed = Object.values(counts).reduce((sum, n) => sum + n, 0);
    const record =
      changed === 0
        ? null
        : await this.erasures.insert(tx, { ...about, orderIds, counts, changed });
    return { orderIds, counts, changed, record, previous: null };
  }
}
