/**
 * The transitions of a begun attempt (attempts/ alone holds `command_attempts`' SQL: see
 * command-attempt.repository.ts): sent marks, complete, fail, hold, in doubt, the writes
 * after a probe and their takeovers, and the settlements from outside. Each WHERE is the
 * condition of its transition in protocol/attempt-protocol.ts (TRANSITIONS), which
 * test/orders/attempt-protocol-oracle.test.ts holds it to.
 */
import { z } from 'zod';
import type { Sql } from '../../../database/database.js';
import type { TransactionBatcher } from '../../../database/transaction-batcher.js';
import { render } from '../../../database/statement.js';
import type {
  ProcessedEventRepository,
  ProcessedEventRow,
} from '../../processed-event.repository.js';
import type { ProbeEvidence, ProbeOutcome } from '../command-spec.js';
import {
  held,
  idRow,
  lease,
  probeParams,
  windowEnd,
  type AttemptOwner,
  type ProbedHold,
} from './attempt-sql.js';

/** A finished attempt and its event, processed. */
export interface FinishedAttempt extends ProcessedEventRow {
  readonly attemptId: string;
}

const paymentIdRow = z.object({ payment_id: z.string().nullable() });
const finishedRow = z.object({ finished: z.number().int() });
const existsRow = z.object({ found: z.boolean() });
const heldRow = z.object({
  held_until: z.date(),
  /** Milliseconds until held_until, by the ledger's clock. */
  remaining_ms: z.number(),
  /** Milliseconds since the latest request left, by the ledger's clock. */
  since_sent_ms: z.number(),
  first_hold: z.boolean(),
});
/** A `hold` that this statement made: until when, and how far into the window. */
export type HeldAttempt = z.infer<typeof heldRow>;
const notTakenRow = z.object({
  state: z.string().nullable(),
  window_end: z.date().nullable(),
  window_runs: z.boolean().nullable(),
});
const decidedRow = z.object({ id: z.string(), held_since: z.date().nullable() });

/**
 * `mark_sent`: the attempts' requests are about to leave: marked only while `owner` still
 * owns them (lease not run out, not taken over), in one autocommit statement outside any
 * batch (see StatementGroup). `sent_at` keeps the first request, `last_sent_at` the latest,
 * from which the late-effect window counts (a call that sends again, e.g. after a 401
 * refresh, may be applied from its latest request). Returns the ids marked.
 */
export async function markSent(
  batcher: TransactionBatcher,
  attemptIds: readonly string[],
  owner: string,
): Promise<Set<string>> {
  const rows = await batcher.runAlone(
    `UPDATE command_attempts c SET sent_at = COALESCE(c.sent_at, clock_timestamp()),
            last_sent_at = clock_timestamp()
       FROM unnest($1::bigint[]) AS x (id)
      WHERE c.id = x.id AND c.state = 'started' AND c.owner = $2
        AND c.lease_until > clock_timestamp()
     RETURNING c.id::text AS id`,
    [attemptIds, owner],
  );
  return new Set(rows.map((row) => idRow.parse(row).id));
}

/**
 * `complete`, `complete_late`: the attempts of a batch `succeeded` (or `resolved` when they
 * were in doubt) and their events processed, in one statement. Returns how many attempts
 * it finished.
 */
export async function finish(
  processed: ProcessedEventRepository,
  tx: Sql,
  rows: readonly FinishedAttempt[],
): Promise<number> {
  const { text, params } = render(
    (bind) => `
  WITH a AS (
    UPDATE command_attempts c
       SET state = CASE WHEN c.state = 'in_doubt' THEN 'resolved' ELSE 'succeeded' END,
           finished_at = clock_timestamp()
      FROM unnest(${bind(rows.map((row) => row.attemptId))}::bigint[]) AS x (id)
     WHERE c.id = x.id AND c.state IN ('started', 'in_doubt')
    RETURNING c.id),
  e AS (${processed.recordMany(rows)(bind)})
  SELECT count(*)::int AS finished FROM a`,
  );
  const [row] = await tx.query(text, params);
  return row === undefined ? 0 : finishedRow.parse(row).finished;
}

/**
 * `fail`: the call had no effect: failed, only while `owner` owns it (a taker-over is
 * calling) and it is not held (`held_until`): a read that held it waits out the
 * late-effect window, and a failed attempt would be sent again by the next delivery.
 */
export async function markFailed(
  tx: Sql,
  attemptId: string,
  errorCode: string,
  owner: string,
): Promise<void> {
  await tx.execute(
    `UPDATE command_attempts SET state = 'failed', error_code = $2,
            finished_at = clock_timestamp()
      WHERE id = $1 AND state = 'started' AND owner = $3 AND held_until IS NULL`,
    [attemptId, errorCode, owner],
  );
}

/**
 * `fail_probed`: the owner's probe after its own unclear call found it not applied, and
 * its latest request left at least `windowMs` ago (it can no longer land): failed, with
 * the probe recorded, so that the event's retry sends it again. False while the window
 * runs (the attempt is then held instead), when it is not this worker's any more, or when
 * it is held (`held_until`): a held attempt is sent again only by `take_over_probed`, after
 * a read once its window ended.
 */
export async function failProbed(
  tx: Sql,
  attemptId: string,
  errorCode: string,
  probed: ProbedHold,
  windowMs: number,
): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE command_attempts SET state = 'failed', error_code = $2,
            finished_at = clock_timestamp(),
            probe_outcome = $3, probe_evidence = $4::jsonb, probed_at = clock_timestamp()
      WHERE id = $1 AND state = 'started' AND sent_at IS NOT NULL AND owner = $5
        AND held_until IS NULL AND ${windowEnd('$6')} <= clock_timestamp()
     RETURNING id::text AS id`,
    [attemptId, errorCode, probed.outcome, JSON.stringify(probed.evidence), probed.owner, windowMs],
  );
  return rows.length > 0;
}

/**
 * `hold`: a probe found the call not applied while its latest request may still land
 * (less than `windowMs` ago). Nobody sends it again: it stays started, its lease is
 * released so that any worker's next read decides (its own retry, or a replacement's
 * after a crash), and `held_until` records when the window ends. Same hold condition as
 * the probe. Null when the window has passed or another worker holds it meanwhile.
 */
export async function holdForLateEffect(
  tx: Sql,
  attemptId: string,
  probed: ProbedHold,
  windowMs: number,
): Promise<HeldAttempt | null> {
  const [row] = await tx.query(
    `WITH before AS (SELECT held_since FROM command_attempts WHERE id = $1)
     UPDATE command_attempts c
        SET lease_until = LEAST(c.lease_until, clock_timestamp()),
            held_since = COALESCE(c.held_since, clock_timestamp()),
            held_until = ${windowEnd('$6', 'c')},
            probe_outcome = $2, probe_evidence = $3::jsonb, probed_at = clock_timestamp()
       FROM before
      WHERE c.id = $1 AND c.state = 'started' AND c.sent_at IS NOT NULL
        AND ${windowEnd('$6', 'c')} > clock_timestamp() AND ${held(2, 'c')}
     RETURNING c.held_until,
               (EXTRACT(EPOCH FROM c.held_until - clock_timestamp()) * 1000)::float8
                 AS remaining_ms,
               (EXTRACT(EPOCH FROM clock_timestamp() - COALESCE(c.last_sent_at, c.sent_at))
                 * 1000)::float8 AS since_sent_ms,
               before.held_since IS NULL AS first_hold`,
    [attemptId, ...probeParams(probed), windowMs],
  );
  return row === undefined ? null : heldRow.parse(row);
}

/**
 * `in_doubt` (and, with a probe, `in_doubt_probed_own` / `_expired`): the started attempt
 * is in doubt (once), held or not: in doubt it is never sent again, the safe side of a
 * hold. Returns its payment id when this statement marked it, undefined when it was not
 * started any more.
 */
export async function markInDoubt(
  tx: Sql,
  attemptId: string,
  errorCode: string,
  probed?: ProbedHold,
): Promise<{ readonly paymentId: string | null } | undefined> {
  const [row] = await tx.query(
    `UPDATE command_attempts SET state = 'in_doubt', error_code = $2,
            finished_at = clock_timestamp(),
            probe_outcome = COALESCE($3, probe_outcome),
            probe_evidence = COALESCE($4::jsonb, probe_evidence),
            probed_at = CASE WHEN $3::text IS NULL THEN probed_at ELSE clock_timestamp() END
      WHERE id = $1 AND state = 'started' AND ${held(3)}
     RETURNING payment_id::text AS payment_id`,
    [attemptId, errorCode, ...probeParams(probed)],
  );
  return row === undefined ? undefined : { paymentId: paymentIdRow.parse(row).payment_id };
}

/**
 * The first step of `complete_probed_own` / `_expired`: a probe found that the attempt's
 * call took effect: the attempt becomes this worker's (same hold as when it was probed),
 * with the probe recorded, for the complete step of the same transaction (held or not: a
 * read that finds the call applied completes it at once). False when another worker holds
 * or took it meanwhile (busy).
 */
export async function claimProbed(
  tx: Sql,
  attemptId: string,
  probed: ProbedHold,
): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE command_attempts SET owner = $4, probe_outcome = $2, probe_evidence = $3::jsonb,
            probed_at = clock_timestamp()
      WHERE id = $1 AND state = 'started' AND ${held(2)}
     RETURNING id::text AS id`,
    [attemptId, ...probeParams(probed)],
  );
  return rows.length > 0;
}

/** What a read of Payflow found, for `take_over_probed`: only once the window has passed. */
export interface TakeOverProbe {
  readonly outcome: ProbeOutcome;
  readonly evidence: ProbeEvidence;
  readonly windowMs: number;
}

/** The attempt taken over, and when it was first held (null: never). */
export interface TakenOver {
  readonly attemptId: string;
  readonly heldSince: Date | null;
}

/**
 * Takes a stopped worker's sent attempt over for a new call (sent again), like an attempt
 * that never left: `take_over_sent` for a repeatable call (`probe` null), or
 * `take_over_probed` when a probe found it not applied, with the probe recorded and only
 * once its latest request left at least `windowMs` ago (it can no longer land). Only a
 * started attempt sent by a worker whose lease ran out (or released for a late-effect
 * hold; without a probe, never a held one: only a read after its window sends that again).
 * Null when another worker holds it, or the window still runs.
 */
export async function takeOverProbed(
  tx: Sql,
  attemptId: string,
  owner: AttemptOwner,
  probe: TakeOverProbe | null,
): Promise<TakenOver | null> {
  const { text, params } = render(
    (bind) => `
  WITH before AS (SELECT held_since FROM command_attempts WHERE id = ${bind(attemptId)})
  UPDATE command_attempts
     SET owner = ${bind(owner.owner)}, lease_until = ${lease(bind, owner.leaseMs)},
         started_at = clock_timestamp(), sent_at = NULL, last_sent_at = NULL,
         held_since = NULL, held_until = NULL, error_code = NULL,
         probe_outcome = COALESCE(${bind(probe?.outcome ?? null)}, probe_outcome),
         probe_evidence = COALESCE(${bind(probe === null ? null : JSON.stringify(probe.evidence))}::jsonb,
                                   probe_evidence),
         probed_at = CASE WHEN ${bind(probe === null)}::boolean THEN probed_at
                          ELSE clock_timestamp() END
    FROM before
   WHERE id = ${bind(attemptId)} AND state = 'started' AND sent_at IS NOT NULL
     AND lease_until <= clock_timestamp()
     AND CASE WHEN ${bind(probe === null)}::boolean THEN held_until IS NULL
              ELSE ${windowEnd(bind(probe?.windowMs ?? 0))} <= clock_timestamp() END
  RETURNING id::text AS id, before.held_since`,
  );
  const [row] = await tx.query(text, params);
  if (row === undefined) return null;
  const taken = decidedRow.parse(row);
  return { attemptId: taken.id, heldSince: taken.held_since };
}

/** Whether a started attempt about the payment outlived its lease (its worker stopped). */
export async function hasAbandoned(tx: Sql, paymentId: string): Promise<boolean> {
  const [row] = await tx.query(
    `SELECT EXISTS (SELECT 1 FROM command_attempts
                     WHERE payment_id = $1::uuid AND state = 'started'
                       AND lease_until <= clock_timestamp()) AS found`,
    [paymentId],
  );
  return row !== undefined && existsRow.parse(row).found;
}

/** `resolve`: the payment's open attempts are settled from outside (resolveInDoubt). */
export async function resolveForPayment(tx: Sql, paymentId: string): Promise<void> {
  await tx.execute(
    `UPDATE command_attempts SET state = 'resolved', finished_at = clock_timestamp()
      WHERE payment_id = $1::uuid AND state IN ('in_doubt', 'started')`,
    [paymentId],
  );
}

/** What `markNotTaken` did. */
export type NotTaken =
  | { readonly kind: 'marked' }
  | { readonly kind: 'not_in_doubt' }
  | { readonly kind: 'window'; readonly until: Date };

/**
 * `not_taken`: a person found that the in-doubt call never took effect (`in-doubt resolve
 * --not-created`): the attempt becomes `failed`, like a call that never left, so the
 * next delivery of its event takes it over and sends it. Only once its latest request
 * left at least `windowMs` ago, or never left: before that Payflow may still apply it
 * (`window`, with when it ends), and the update's WHERE says so too. `not_in_doubt` when
 * it was not in doubt.
 */
export async function markNotTaken(
  tx: Sql,
  attemptId: string,
  errorCode: string,
  windowMs: number,
): Promise<NotTaken> {
  const [row] = await tx.query(
    `SELECT state, ${windowEnd('$2')} AS window_end,
            ${windowEnd('$2')} > clock_timestamp() AS window_runs
       FROM command_attempts WHERE id = $1 FOR UPDATE`,
    [attemptId, windowMs],
  );
  const found = notTakenRow.parse(row ?? { state: null, window_end: null, window_runs: null });
  if (found.state !== 'in_doubt') return { kind: 'not_in_doubt' };
  if (found.window_runs === true && found.window_end !== null) {
    return { kind: 'window', until: found.window_end };
  }
  await tx.execute(
    `UPDATE command_attempts SET state = 'failed', error_code = $2,
            finished_at = clock_timestamp()
      WHERE id = $1 AND state = 'in_doubt'
        AND (${windowEnd('$3')} IS NULL OR ${windowEnd('$3')} <= clock_timestamp())`,
    [attemptId, errorCode, windowMs],
  );
  return { kind: 'marked' };
}
