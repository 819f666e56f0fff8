/**
 * A person's way out of "in doubt" (`in-doubt list`, `in-doubt resolve`). The bridge never
 * repeats a call that may have taken effect; a person looks at Payflow and says either
 * "this is the payment" (checked here against Payflow: same organization, total and
 * currency) or "it was never created". The verdict then runs the code paths that exist
 * already: the same resolver as a webhook (payment `created`, attempt `resolved`,
 * `payment.created`), or the attempt `failed` like a call that never left, so that the
 * event's next delivery sends it; then the order's parked events are republished the way
 * `dlq replay --order` does. Every verdict is recorded in the order's history.
 *
 * Idempotent by the attempt's state: a call no longer in doubt is "already resolved", and
 * a run cut short after the verdict (before the republication) is finished by the next.
 */
import { describeError } from '../../errors/app-error.js';
import { formatMinorUnits } from '../../money/money.js';
import type { Database } from '../../database/database.js';
import { PayflowError, PayflowNotFoundError } from '../../payflow/payflow.errors.js';
import type { PayflowApi, PaymentStatus } from '../../payflow/payflow.types.js';
import type { InDoubtResolver } from '../../payments/in-doubt-resolver.port.js';
import type { PaymentRepository } from '../../payments/payment.repository.js';
import type { CommandAttemptRepository } from '../engine/attempts/command-attempt.repository.js';
import { PAYMENT_CREATION, type InDoubtCalls, type InDoubtRow } from './in-doubt-calls.port.js';
import { InDoubtRefusedError } from './in-doubt.errors.js';
import type { InDoubtVerdictRepository, VerdictRow } from './in-doubt-verdict.repository.js';

/** The attempt's error code after `--not-created`. */
export const NOT_CREATED_CODE = 'OPERATOR.NOT_CREATED';

/** Republishes an order's dead letters (DeadLetterReplayService, as `dlq replay --order`). */
export interface OrderReplayer {
  replayOrder(orderId: string): Promise<ReplaySummary>;
}

export interface ReplaySummary {
  readonly messages: number;
  readonly byReason: Readonly<Record<string, number>>;
}

export type Verdict =
  { readonly kind: 'payment_found'; readonly payflowId: string } | { readonly kind: 'not_created' };

export interface ResolveRequest {
  readonly orderId: string;
  readonly verdict: Verdict;
  /** Who decided: `--by`, else the OS user name. */
  readonly decidedBy: string;
}

export interface ResolveOutcome {
  /** `resolved`: this run settled the call; `already`: an earlier verdict (or webhook) had. */
  readonly kind: 'resolved' | 'already';
  readonly verdict: VerdictRow | null;
  /** Set when this run republished the order's dead letters. */
  readonly replayed: ReplaySummary | null;
  /** One line per thing done or found, for the operator. */
  readonly lines: readonly string[];
}

export interface InDoubtServiceDeps {
  readonly database: Database;
  /** The order's call in doubt (the read side's InDoubtListQuery). */
  readonly reads: InDoubtCalls;
  readonly verdicts: InDoubtVerdictRepository;
  readonly attempts: CommandAttemptRepository;
  readonly payments: PaymentRepository;
  /** The same port the webhook processor settles in-doubt creations through. */
  readonly resolver: InDoubtResolver;
  /** Only `--payment` asks Payflow; null when the command was not given its credentials. */
  readonly payflow: Pick<PayflowApi, 'getPaymentStatus'> | null;
  readonly replayer: OrderReplayer;
  /** PAYFLOW_LATE_EFFECT_WINDOW: `--not-created` is refused while the request may still land. */
  readonly lateEffectWindowMs: number;
}

function describeVerdict(verdict: VerdictRow): string {
  const what =
    verdict.verdict === 'payment_found'
      ? `payment found at Payflow (${verdict.payflowId ?? '?'})`
      : 'not created at Payflow';
  return `${what} by ${verdict.decidedBy} at ${verdict.decidedAt.toISOString()}`;
}

function sameVerdict(recorded: VerdictRow, asked: Verdict): boolean {
  if (recorded.verdict !== asked.kind) return false;
  return asked.kind === 'not_created' || recorded.payflowId === asked.payflowId;
}

function money(minor: number | string, currency: string): string {
  const code = currency.trim();
  try {
    return `${formatMinorUnits(typeof minor === 'string' ? BigInt(minor) : minor, code)} ${code}`;
  } catch {
    return `${minor} minor units ${code}`;
  }
}

export class InDoubtService {
  constructor(private readonly deps: InDoubtServiceDeps) {}

  async resolve(request: ResolveRequest): Promise<ResolveOutcome> {
    const { database, reads } = this.deps;
    const [call] = await reads.ofOrder(database.sql, request.orderId);
    if (call !== undefined) {
      const outcome =
        request.verdict.kind === 'payment_found'
          ? await this.adopt(call, request.verdict.payflowId, request.decidedBy)
          : await this.notCreated(call, request.decidedBy);
      // null: settled meanwhile (a webhook, another run): report that instead.
      if (outcome !== null) return outcome;
    }
    return this.alreadyResolved(request);
  }

  /** `--payment`: checks the payment at Payflow, settles the creation with it, unparks. */
  private async adopt(
    call: InDoubtRow,
    payflowId: string,
    decidedBy: string,
  ): Promise<ResolveOutcome | null> {
    const { orderId } = call;
    if (call.command !== PAYMENT_CREATION || call.paymentId === null) {
      throw new InDoubtRefusedError(
        'IN_DOUBT.NOT_A_CREATION',
        `order ${orderId}: the call in doubt is ${call.command}, not a payment creation; ` +
          '--payment adopts only a payment Payflow created. If Payflow did not apply the ' +
          'call, use --not-created; nothing changed',
        { orderId, eventId: call.eventId },
      );
    }
    const paymentId = call.paymentId;
    if (
      await this.deps.payments.payflowIdTakenElsewhere(this.deps.database.sql, payflowId, paymentId)
    ) {
      throw new InDoubtRefusedError(
        'IN_DOUBT.PAYMENT_TAKEN',
        `refused: Payflow payment ${payflowId} already belongs to another payment of the bridge; nothing changed`,
        { orderId, payflowId },
      );
    }
    const status = await this.lookUp(call, payflowId);
    const mismatch = this.mismatch(call, payflowId, status);
    if (mismatch !== null) {
      throw new InDoubtRefusedError(
        'IN_DOUBT.MISMATCH',
        `refused: Payflow payment ${payflowId} is not the one order ${orderId} tried to create: ${mismatch}; nothing changed`,
        { orderId, payflowId },
      );
    }
    const settled = await this.deps.resolver.resolveInDoubt(paymentId, {
      payflowId,
      installments: status.installments,
    });
    if (!settled) return null;
    const verdict = await this.deps.verdicts.record(this.deps.database.sql, {
      orderId,
      eventId: call.eventId,
      attemptId: call.attemptId,
      command: call.command,
      verdict: 'payment_found',
      payflowId,
      paymentId,
      decidedBy,
    });
    const lines = [
      `Order ${orderId}: adopted Payflow payment ${payflowId} for ${call.command} ${call.eventId} ` +
        `(checked: organization ${status.merchantId}, total ${money(status.totalAmountMinor, status.currency)}).`,
      `  payment ${paymentId} created, attempt ${call.attemptId} resolved, payment.created queued.`,
    ];
    return this.unpark('resolved', verdict, lines);
  }

  /** `--not-created`: the call counts as never taken; unparks so the event is sent again. */
  private async notCreated(call: InDoubtRow, decidedBy: string): Promise<ResolveOutcome | null> {
    const { attempts, payments, verdicts } = this.deps;
    const creation = call.command === PAYMENT_CREATION && call.paymentId !== null;
    const verdict = await this.deps.database.transaction(async (tx) => {
      const marked = await attempts.markNotTaken(
        tx,
        call.attemptId,
        NOT_CREATED_CODE,
        this.deps.lateEffectWindowMs,
      );
      if (marked.kind === 'window') {
        throw new InDoubtRefusedError(
          'IN_DOUBT.LATE_EFFECT_WINDOW',
          `order ${call.orderId}: its request left Payflow less than PAYFLOW_LATE_EFFECT_WINDOW ago, ` +
            `so Payflow may still apply it until ${marked.until.toISOString()}; ` +
            'give --not-created after that; nothing changed',
          { orderId: call.orderId, eventId: call.eventId },
        );
      }
      if (marked.kind === 'not_in_doubt') return null;
      if (creation && call.paymentId !== null) await payments.reopenInDoubt(tx, call.paymentId);
      return verdicts.record(tx, {
        orderId: call.orderId,
        eventId: call.eventId,
        attemptId: call.attemptId,
        command: call.command,
        verdict: 'not_created',
        payflowId: null,
        paymentId: call.paymentId,
        decidedBy,
      });
    });
    if (verdict === null) return null;
    const lines = [
      `Order ${call.orderId}: ${call.command} ${call.eventId} marked as never taken by Payflow.`,
      `  attempt ${call.attemptId} failed (${NOT_CREATED_CODE})` +
        (creation ? `, payment ${call.paymentId ?? '?'} back to creating` : '') +
        '; its replay sends the call again.',
    ];
    return this.unpark('resolved', verdict, lines);
  }

  /** Nothing in doubt: an earlier verdict (finished if it was cut short), a webhook, or nothing. */
  private async alreadyResolved(request: ResolveRequest): Promise<ResolveOutcome> {
    const { database, reads, verdicts } = this.deps;
    const { orderId } = request;
    const last = (await verdicts.ofOrder(database.sql, orderId)).at(-1);
    if (last !== undefined) {
      if (!sameVerdict(last, request.verdict)) {
        throw new InDoubtRefusedError(
          'IN_DOUBT.OTHER_VERDICT',
          `order ${orderId} was already resolved otherwise: ${describeVerdict(last)}; nothing changed`,
          { orderId },
        );
      }
      const lines = [`Order ${orderId}: already resolved, ${describeVerdict(last)}.`];
      if (last.replayedAt === null) return this.unpark('already', last, lines);
      return { kind: 'already', verdict: last, replayed: null, lines };
    }
    const resolved = await reads.lastResolved(database.sql, orderId);
    if (resolved !== null && request.verdict.kind === 'payment_found') {
      if (resolved.payflowId !== request.verdict.payflowId) {
        throw new InDoubtRefusedError(
          'IN_DOUBT.OTHER_PAYMENT',
          `order ${orderId}: its creation was already settled as Payflow payment ${resolved.payflowId ?? '?'}, not ${request.verdict.payflowId}; nothing changed`,
          { orderId },
        );
      }
      // Settled by a webhook (or a run that stopped before recording): record and unpark.
      const verdict = await verdicts.record(database.sql, {
        orderId,
        eventId: resolved.eventId,
        attemptId: resolved.attemptId,
        command: resolved.command,
        verdict: 'payment_found',
        payflowId: request.verdict.payflowId,
        paymentId: resolved.paymentId,
        decidedBy: request.decidedBy,
      });
      const lines = [
        `Order ${orderId}: already resolved, its creation settled as Payflow payment ${request.verdict.payflowId}` +
          ` (by a webhook); verdict recorded.`,
      ];
      return this.unpark('already', verdict, lines);
    }
    if (resolved !== null) {
      throw new InDoubtRefusedError(
        'IN_DOUBT.OTHER_VERDICT',
        `order ${orderId}: its creation was already settled as Payflow payment ${resolved.payflowId ?? '?'}; --not-created does not apply; nothing changed`,
        { orderId },
      );
    }
    throw new InDoubtRefusedError(
      'IN_DOUBT.NOTHING_IN_DOUBT',
      `order ${orderId} has no Payflow call in doubt (see in-doubt list)`,
      { orderId },
    );
  }

  /** Republishes the order's dead letters (unblocking it) and marks the verdict done. */
  private async unpark(
    kind: ResolveOutcome['kind'],
    verdict: VerdictRow,
    lines: readonly string[],
  ): Promise<ResolveOutcome> {
    const { orderId } = verdict;
    const replayed = await this.deps.replayer.replayOrder(orderId);
    await this.deps.verdicts.markReplayed(this.deps.database.sql, verdict.id, replayed.messages);
    const reasons = Object.entries(replayed.byReason)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([reason, count]) => `${reason} ${count}`)
      .join(', ');
    return {
      kind,
      verdict,
      replayed,
      lines: [
        ...lines,
        replayed.messages === 0
          ? '  no dead letter of the order waited for a replay.'
          : `  order unblocked; republished ${replayed.messages} dead letter(s) (${reasons}).`,
        `  recorded: verdict #${verdict.id} by ${verdict.decidedBy} at ${verdict.decidedAt.toISOString()}.`,
      ],
    };
  }

  private async lookUp(call: InDoubtRow, payflowId: string): Promise<PaymentStatus> {
    const payflow = this.deps.payflow;
    if (payflow === null) throw new Error('--payment needs the PAYFLOW_* variables');
    try {
      // Asked as the organization the bridge sent: a payment of another one is not found.
      return await payflow.getPaymentStatus(
        payflowId,
        call.organizationId === null ? {} : { organizationId: call.organizationId },
      );
    } catch (error) {
      if (!(error instanceof PayflowError)) throw error;
      const where = call.organizationId === null ? '' : ` in organization ${call.organizationId}`;
      throw new InDoubtRefusedError(
        error instanceof PayflowNotFoundError
          ? 'IN_DOUBT.NOT_AT_PAYFLOW'
          : 'IN_DOUBT.LOOKUP_FAILED',
        error instanceof PayflowNotFoundError
          ? `refused: Payflow has no payment ${payflowId}${where}; nothing changed`
          : `could not check payment ${payflowId} at Payflow${where} (${describeError(error)}); nothing changed`,
        { orderId: call.orderId, payflowId },
        error,
      );
    }
  }

  /** Why Payflow's payment is not the one the bridge tried to create, or null. */
  private mismatch(call: InDoubtRow, payflowId: string, status: PaymentStatus): string | null {
    if (status.paymentId !== payflowId) return `Payflow answered for payment ${status.paymentId}`;
    if (call.organizationId !== null && status.merchantId !== call.organizationId) {
      return `it belongs to organization ${status.merchantId}, the bridge sent ${call.organizationId}`;
    }
    const currency = call.currency?.trim() ?? '';
    const total = call.totalGross ?? '';
    if (status.currency !== currency) {
      return `its currency is ${status.currency}, the bridge sent ${currency}`;
    }
    if (String(status.totalAmountMinor) !== total) {
      return (
        `its total is ${money(status.totalAmountMinor, status.currency)}, ` +
        `the bridge sent ${money(total, currency)}`
      );
    }
    const internalRef: unknown = Reflect.get(status.raw, 'internalRef');
    if (typeof internalRef === 'string' && internalRef !== call.orderId) {
      return `its internalRef is another order (${internalRef})`;
    }
    return null;
  }
}
