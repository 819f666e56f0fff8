/**
 * The read of Payflow that decides a call which may have taken effect (the command's
 * `probe`), outside any transaction: retried with the house back-off while Payflow cannot
 * be read, then `unreadable`. It logs and counts the finding; what the finding leads to is
 * the protocol's (protocol/attempt-steps.ts, afterProbe).
 */
import { backoffDelayMs, type BackoffPolicy } from '../../timing/backoff.js';
import type { AppLogger } from '../../logging/logger.js';
import { sleep } from '../../timing/sleep.js';
import { PayflowError } from '../../payflow/payflow.errors.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import type { CommandSpec } from './command-spec.js';
import type { OrderCommand } from './order-command.js';
import type { ProbeMetrics } from './probe-metrics.js';
import type { ProbeResult } from './protocol/attempt-steps.js';

/** Reads of Payflow a probe makes before it calls Payflow unreadable. */
const PROBE_TRIES = 4;
const PROBE_BACKOFF: BackoffPolicy = { baseDelayMs: 500, maxDelayMs: 4000 };

export interface ProbeReading {
  /** Each read's deadline (the call's). */
  readonly deadlineMs: number;
  readonly logger: AppLogger;
  readonly metrics?: ProbeMetrics;
}

export async function readPayflow<T extends OrderEventType, S, R>(
  command: OrderCommand<T>,
  spec: CommandSpec<T, S, R>,
  state: S,
  { deadlineMs, logger, metrics }: ProbeReading,
): Promise<ProbeResult<R>> {
  const probe = spec.probe?.bind(spec);
  if (probe === undefined) throw new Error(`${spec.type} has no probe`);
  let verdict: ProbeResult<R> | undefined;
  for (let tryNumber = 1; verdict === undefined; tryNumber += 1) {
    try {
      verdict = await probe(state, {
        signal: AbortSignal.timeout(deadlineMs),
        trace: command.trace.headers(),
      });
    } catch (error) {
      if (!(error instanceof PayflowError)) throw error;
      if (tryNumber >= PROBE_TRIES) {
        verdict = {
          kind: 'unreadable',
          evidence: { read: error.endpoint, shown: `${error.code} after ${tryNumber} tries` },
        };
        break;
      }
      await sleep(backoffDelayMs(tryNumber, PROBE_BACKOFF));
    }
  }
  metrics?.probed(spec.type, verdict.kind);
  logger.info(
    {
      eventId: command.eventId,
      orderId: command.orderId,
      type: spec.type,
      traceId: command.trace.traceId,
      outcome: verdict.kind,
      read: verdict.evidence.read,
      shown: verdict.evidence.shown,
    },
    'call that may have taken effect decided by reading Payflow',
  );
  return verdict;
}
