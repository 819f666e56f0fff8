/**
 * Reports what still slips through (issue 26 §1): whenever the bridge reads a payment at
 * Payflow (a webhook's refetch, the reconciliation poll, a probe), the installments and
 * documents Payflow holds that no event of the order explains are recorded, once each
 * (`unexplained_effects`), with one warning and one count on first record. The bridge
 * deletes nothing: a person decides (docs/operations.md, "Effects no event explains").
 *
 * Load (one read of what the bridge recorded, for every payment of the batch), decide
 * (unexplained-effects.matching.ts), record (one statement, only when something was found),
 * report. A read that holds no installment and no document costs no statement at all.
 *
 * A check never fails its caller: what it reports is beside the read's own work (a status
 * change, a probe's verdict), so a failure is logged and the payment's next read checks again.
 */
import type { Registry } from 'prom-client';
import { describeError } from '../../errors/app-error.js';
import { silentLogger, type AppLogger } from '../../logging/logger.js';
import type { Sql } from '../../database/database.js';
import type { PaymentStatus } from '../../payflow/payflow.types.js';
import {
  UnexplainedEffectRepository,
  type CheckedPayment,
  type RecordedSighting,
  type Sighting,
} from './unexplained-effect.repository.js';
import {
  holdingsOf,
  holdsAnything,
  unexplainedEffects,
  type BridgeRecords,
  type SightingSource,
} from './unexplained-effects.matching.js';
import {
  unexplainedEffectsMetrics,
  type UnexplainedEffectsMetrics,
} from './unexplained-effects.metrics.js';

/** One read of a payment at Payflow, to check. */
export interface PaymentRead {
  readonly payment: CheckedPayment;
  readonly status: PaymentStatus;
  /** The read's trace id, for the log line. */
  readonly traceId?: string | undefined;
}

const NOTHING_RECORDED: BridgeRecords = {
  installmentIds: new Set(),
  unboundInstallments: [],
  documentIds: new Set(),
  liveCommands: new Set(),
};

export class UnexplainedEffects {
  constructor(
    private readonly sql: Sql,
    private readonly logger: AppLogger,
    private readonly metrics: UnexplainedEffectsMetrics,
    private readonly repository = new UnexplainedEffectRepository(),
  ) {}

  /** The check over `sql`, logging to `logger`, counting in `registry` (when there is one). */
  static create(sql: Sql, logger?: AppLogger, registry?: Registry): UnexplainedEffects {
    return new UnexplainedEffects(
      sql,
      logger ?? silentLogger(),
      unexplainedEffectsMetrics(registry),
    );
  }

  /** Checks one read of `payment`; resolves to what it recorded (first seen or seen again). */
  check(
    payment: CheckedPayment,
    status: PaymentStatus,
    source: SightingSource,
    traceId?: string,
  ): Promise<readonly RecordedSighting[]> {
    return this.checkMany(
      [{ payment: { id: payment.id, orderId: payment.orderId }, status, traceId }],
      source,
    );
  }

  /** Checks many reads with one read of the bridge's records (the reconciliation poll's page). */
  async checkMany(
    reads: readonly PaymentRead[],
    source: SightingSource,
  ): Promise<readonly RecordedSighting[]> {
    const ids = reads.map((read) => read.payment.id);
    try {
      const held = reads
        .map((read) => ({ read, holdings: holdingsOf(read.status) }))
        .filter((entry) => holdsAnything(entry.holdings));
      if (held.length === 0) return [];
      const records = await this.repository.recordsOf(
        this.sql,
        held.map((entry) => entry.read.payment),
      );
      const sightings: Sighting[] = held.flatMap(({ read, holdings }) =>
        unexplainedEffects(
          holdings,
          records.get(read.payment.id) ?? NOTHING_RECORDED,
        ).unexplained.map((effect) => ({ payment: read.payment, effect })),
      );
      const recorded = await this.repository.record(this.sql, sightings, source);
      for (const sighting of recorded) {
        if (sighting.firstSeen) this.report(sighting, reads, source);
      }
      return recorded;
    } catch (error) {
      this.logger.warn(
        // A page of the poll is hundreds of payments: the first ids name it well enough.
        { source, payments: ids.length, paymentIds: ids.slice(0, 20), err: describeError(error) },
        'unexplained effects: check failed; the next read of these payments checks again',
      );
      return [];
    }
  }

  /** One line and one count per effect, when first recorded (ids only, no personal data). */
  private report(
    sighting: RecordedSighting,
    reads: readonly PaymentRead[],
    source: SightingSource,
  ): void {
    const read = reads.find((entry) => entry.payment.id === sighting.paymentId);
    this.metrics.firstSeen(sighting.kind, source);
    this.logger.warn(
      {
        orderId: read?.payment.orderId,
        paymentId: sighting.paymentId,
        payflowPaymentId: read?.status.paymentId,
        kind: sighting.kind,
        payflowId: sighting.payflowId,
        source,
        traceId: read?.traceId,
      },
      'effect at Payflow that no event of the order explains',
    );
  }
}
