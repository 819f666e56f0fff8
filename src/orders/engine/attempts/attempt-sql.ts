/**
 * What the statements on `command_attempts` share (attempts/ alone holds that table's SQL:
 * see command-attempt.repository.ts): the lease and late-effect window expressions, the
 * hold condition of the writes after a probe, and the rows' small schemas.
 */
import { z } from 'zod';
import type { Bind } from '../../../database/statement.js';
import type { ProbeEvidence, ProbeOutcome } from '../command-spec.js';

/** Who records an attempt, for how long, and about which payment. */
export interface AttemptOwner {
  readonly command: string;
  readonly owner: string;
  readonly leaseMs: number;
}

/** What a probe read at Payflow and what it showed (`command_attempts.probe_evidence`). */
export const probeEvidence = z.object({ read: z.string(), shown: z.string() });
export type { ProbeEvidence };

/**
 * How the attempt was held when it was probed, and what the probe found: `expired`, a
 * stopped worker's sent attempt (lease run out); `own`, this worker's attempt whose call
 * failed unclearly. The writes that follow a probe hold to the same condition, so that an
 * attempt another worker took meanwhile is left alone.
 */
export interface ProbedHold {
  readonly hold: 'expired' | 'own';
  readonly owner: string;
  readonly outcome: ProbeOutcome;
  readonly evidence: ProbeEvidence;
}

export const idRow = z.object({ id: z.string() });

/** The lease's end, `leaseMs` from now by the ledger's clock. */
export function lease(bind: Bind, leaseMs: number): string {
  return `clock_timestamp() + make_interval(secs => ${bind(leaseMs)}::float8 / 1000)`;
}

/**
 * When the attempt's latest request can no longer land: `window` a bound parameter (ms).
 * NULL for an attempt whose request never left (no send mark): it has no window.
 */
export function windowEnd(window: string, alias = ''): string {
  const a = alias === '' ? '' : `${alias}.`;
  return `(CASE WHEN ${a}sent_at IS NOT NULL
           THEN COALESCE(${a}last_sent_at, ${a}sent_at) + make_interval(secs => ${window}::float8 / 1000)
           END)`;
}

/** The hold condition, for statements given probeParams from $first on (outcome, evidence, owner, hold). */
export function held(first: number, alias = ''): string {
  const owner = `$${first + 2}`;
  const hold = `$${first + 3}`;
  const a = alias === '' ? '' : `${alias}.`;
  return `((${hold}::text IS NULL)
    OR (${hold} = 'own' AND ${a}owner = ${owner})
    OR (${hold} = 'expired' AND ${a}sent_at IS NOT NULL AND ${a}lease_until <= clock_timestamp()))`;
}

/** The probe's parameters: outcome, evidence, owner, hold. */
export function probeParams(probed: ProbedHold | undefined): (string | null)[] {
  if (probed === undefined) return [null, null, null, null];
  return [probed.outcome, JSON.stringify(probed.evidence), probed.owner, probed.hold];
}
