/**
 * How a webhook settles a payment whose creation is in doubt. The webhook proves Payflow
 * created the payment (its token was bound to the row before the call), but its payload's
 * `paymentId` is only a hint: it is used only when GET paymentStatus finds it in the
 * payment's organization with the payment's total and currency (and internalRef, when
 * Payflow sends one); then `resolveInDoubt` marks it created (payment.created) and the
 * status change follows. With no usable hint the rows stay pending with a clear
 * `last_error` (see `order show`).
 */
import { describeError } from '../../errors/app-error.js';
import type { AppLogger } from '../../logging/logger.js';
import type { Database } from '../../database/database.js';
import { PayflowError } from '../../payflow/payflow.errors.js';
import type { PayflowTraceHeaders } from '../../payflow/payflow-trace.js';
import type { InDoubtResolver } from '../../payments/in-doubt-resolver.port.js';
import type { InboxPayment, PaymentRepository } from '../../payments/payment.repository.js';
import type {
  PaymentStatusSync,
  Snapshot,
} from '../../payments/status-sync/payment-status-sync.js';
import type { ClaimedInboxRow } from '../inbox/webhook-inbox.repository.js';
import { webhookHints } from './webhook-hints.js';

/** A failure that leaves the rows pending (with this message) rather than processed. */
export class DeferError extends Error {}

/** What the reads of one payment's webhooks pass to Payflow: the stop signal and the webhook's trace. */
export interface PayflowRead {
  readonly signal: AbortSignal;
  readonly trace: PayflowTraceHeaders;
}

export interface InDoubtHintsOptions {
  readonly database: Database;
  readonly sync: PaymentStatusSync;
  readonly payments: PaymentRepository;
  readonly resolver: InDoubtResolver;
  readonly logger: AppLogger;
}

export class InDoubtHints {
  constructor(private readonly options: InDoubtHintsOptions) {}

  /**
   * A payment without a Payflow id: verifies the payload's `paymentId` hint against
   * Payflow, resolves the payment and returns the verifying snapshot. Throws DeferError
   * when the rows must wait (no usable hint yet, or the creation is still running).
   */
  async resolve(
    payment: InboxPayment,
    rows: readonly ClaimedInboxRow[],
    call: PayflowRead,
  ): Promise<Snapshot> {
    const { database, sync, payments, resolver, logger } = this.options;
    const hints = [
      ...new Set(
        rows.flatMap((row) => {
          const hint = webhookHints(row.body).paymentId;
          return hint === undefined ? [] : [hint];
        }),
      ),
    ];
    if (hints.length === 0) {
      throw new DeferError(
        `payment creation in doubt (state ${payment.state}) and the webhook names no usable ` +
          'paymentId: resolve it manually',
      );
    }
    const problems: string[] = [];
    for (const hint of hints) {
      let snapshot: Snapshot;
      try {
        snapshot = await sync.fetch(
          { payflowId: hint, organizationId: payment.organizationId, currency: payment.currency },
          call.signal,
          call.trace,
        );
      } catch (error) {
        if (error instanceof PayflowError && !error.transient) {
          problems.push(`hint ${hint}: ${describeError(error)}`);
          continue;
        }
        throw error;
      }
      const taken = await payments.payflowIdTakenElsewhere(database.sql, hint, payment.id);
      const mismatch = taken
        ? 'it belongs to another payment of the bridge'
        : verifyHint(payment, hint, snapshot);
      if (mismatch !== null) {
        problems.push(`hint ${hint}: ${mismatch}`);
        continue;
      }
      const resolved = await resolver.resolveInDoubt(payment.id, {
        payflowId: hint,
        installments: snapshot.status.installments,
      });
      if (!resolved) {
        const now = await payments.payflowIdOf(database.sql, payment.id);
        if (now !== hint) {
          throw new DeferError(
            `payment creation not settled yet (state ${payment.state}); Payflow id ${hint} verified`,
          );
        }
      } else {
        logger.info(
          { paymentId: payment.id, orderId: payment.orderId, payflowId: hint },
          'webhook inbox: in-doubt payment resolved by a webhook',
        );
      }
      return snapshot;
    }
    throw new DeferError(
      `payment creation in doubt and no webhook hint could be verified: ${problems.join('; ')}`,
    );
  }
}

/** Why a hinted Payflow payment is not this one, or null when it matches. */
export function verifyHint(payment: InboxPayment, hint: string, snapshot: Snapshot): string | null {
  const status = snapshot.status;
  if (status.paymentId !== hint) return `Payflow answered for payment ${status.paymentId}`;
  const internalRef: unknown = Reflect.get(status.raw, 'internalRef');
  if (typeof internalRef === 'string' && internalRef !== payment.orderId) {
    return 'its internalRef is another order';
  }
  if (status.currency !== payment.currency) return 'its currency differs';
  if (status.totalAmountMinor !== payment.totalGrossMinor) return 'its total differs';
  return null;
}
