/**
 * The protocol's table is the oracle (issue 28): every statement of the attempt ledger that
 * makes a transition is run against an attempt in every state the table knows (each state,
 * this worker's or another's, lease running or run out, late-effect window running or
 * passed, never sent), on real Postgres; what it changed is read back and compared with
 * what `transition()` (TRANSITIONS) says for that state and the statement's transitions.
 * A WHERE clause looser or tighter than its transition's condition fails this test.
 *
 * The view of an attempt, before and after, is the one the engine itself decides from: the
 * guard statement's row (record false: it writes nothing), through `viewOf`. A statement
 * made a transition when it changed the attempt's row (or made one); its target is the
 * state of the row afterwards.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { sqlOf, type Sql } from '../../src/database/database.js';
import { TransactionBatcher } from '../../src/database/transaction-batcher.js';
import {
  CommandAttemptRepository,
  type FinishedAttempt,
  type ProbedHold,
} from '../../src/orders/engine/attempts/command-attempt.repository.js';
import {
  TRANSITIONS,
  transition,
  viewOf,
  type AttemptState,
  type AttemptView,
  type TransitionName,
} from '../../src/orders/engine/protocol/attempt-protocol.js';
import { OrderRepository } from '../../src/orders/order.repository.js';
import { ProcessedEventRepository } from '../../src/orders/processed-event.repository.js';
import { createTestDatabase, openTestPool, type TestDatabase } from '../support/database.js';

/** This worker, which runs every statement; OTHER owns the attempts that are not its own. */
const ME = 'worker-me';
const OTHER = 'worker-other';
const COMMAND = 'order.installment_added';
const WINDOW_MS = 60_000;
const LEASE_MS = 30_000;

let database: TestDatabase;
let pool: pg.Pool;
let sql: Sql;
let batcher: TransactionBatcher;
let attempts: CommandAttemptRepository;

beforeAll(async () => {
  database = await createTestDatabase('attempt_oracle');
  pool = openTestPool(database.url, 4);
  sql = sqlOf(pool);
  batcher = new TransactionBatcher(pool);
  attempts = new CommandAttemptRepository(
    new OrderRepository(),
    new ProcessedEventRepository(),
    batcher,
  );
});

afterAll(async () => {
  await batcher?.close();
  await pool?.end();
  await database?.drop();
});

/** An attempt's situation, as the fixture writes it. */
interface Situation {
  readonly state: AttemptState;
  readonly owner: string;
  readonly leaseExpired: boolean;
  /** When its (latest) request left: never, within the window, or longer ago. */
  readonly sent: 'never' | 'within_window' | 'window_passed';
}

const TERMINAL: readonly AttemptState[] = [
  'succeeded',
  'failed',
  'in_doubt',
  'resolved',
  'discarded',
];

/** Every situation the table tells apart. */
function situations(): Situation[] {
  const all: Situation[] = [{ state: 'none', owner: OTHER, leaseExpired: false, sent: 'never' }];
  for (const owner of [ME, OTHER]) {
    for (const leaseExpired of [false, true]) {
      all.push({ state: 'started', owner, leaseExpired, sent: 'never' });
      for (const sent of ['within_window', 'window_passed'] as const) {
        all.push({ state: 'sent', owner, leaseExpired, sent });
        // A held attempt's lease is released by the hold itself (holdForLateEffect).
        if (leaseExpired) all.push({ state: 'held', owner, leaseExpired, sent });
      }
      for (const state of TERMINAL) {
        for (const sent of ['never', 'within_window', 'window_passed'] as const) {
          all.push({ state, owner, leaseExpired, sent });
        }
      }
    }
  }
  return all;
}

interface Fixture {
  readonly eventId: string;
  readonly orderId: string;
  readonly paymentId: string;
  /** The attempt's id ('0' when there is none). */
  readonly attemptId: string;
}

/** Writes the attempt of a new event in `situation` (none: writes nothing). */
async function arrange(situation: Situation): Promise<Fixture> {
  const eventId = randomUUID();
  const orderId = `ORACLE-${eventId.slice(0, 8)}`;
  const paymentId = randomUUID();
  if (situation.state === 'none') return { eventId, orderId, paymentId, attemptId: '0' };
  const row =
    situation.state === 'sent' || situation.state === 'held' ? 'started' : situation.state;
  const sentAgo = { never: null, within_window: 1_000, window_passed: 2 * WINDOW_MS }[
    situation.sent
  ];
  const [inserted] = await sql.query<{ id: string }>(
    `INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                   payment_id, error_code, finished_at, sent_at, last_sent_at,
                                   held_since, held_until)
     SELECT $1::uuid, $2, $3, $4, $5,
            clock_timestamp() + make_interval(secs => $6::float8 / 1000),
            $7::uuid, CASE WHEN $4 <> 'started' THEN 'ORACLE.FIXTURE' END,
            CASE WHEN $4 <> 'started' THEN clock_timestamp() END, s.at, s.at,
            CASE WHEN $9 THEN s.at END,
            CASE WHEN $9 THEN s.at + make_interval(secs => $10::float8 / 1000) END
       FROM (SELECT clock_timestamp() - make_interval(secs => $8::float8 / 1000) AS at) s
     RETURNING id::text AS id`,
    [
      eventId,
      orderId,
      COMMAND,
      row,
      situation.owner,
      situation.leaseExpired ? -5_000 : LEASE_MS,
      paymentId,
      sentAgo,
      situation.state === 'held',
      WINDOW_MS,
    ],
  );
  if (inserted === undefined) throw new Error('the fixture wrote no attempt');
  return { eventId, orderId, paymentId, attemptId: inserted.id };
}

/** The attempt as the engine sees it: the guard's row (it records nothing), through viewOf. */
async function viewNow(fixture: Fixture): Promise<AttemptView> {
  const row = await attempts.guard(sql, {
    command: COMMAND,
    owner: ME,
    leaseMs: LEASE_MS,
    windowMs: WINDOW_MS,
    eventId: fixture.eventId,
    orderId: fixture.orderId,
    paymentId: fixture.paymentId,
    record: false,
  });
  const view = viewOf(row.attempt);
  if (view === undefined) throw new Error(`unknown attempt state ${row.attempt?.state}`);
  return view;
}

/** The whole row, to tell whether a statement changed it. */
async function rowOf(fixture: Fixture): Promise<string | null> {
  const [row] = await sql.query<{ row: unknown }>(
    `SELECT to_jsonb(c) AS row FROM command_attempts c WHERE event_id = $1::uuid`,
    [fixture.eventId],
  );
  return row === undefined ? null : JSON.stringify(row.row);
}

const evidence = { read: 'GET oracle', shown: 'oracle' };
const probed = (hold: ProbedHold['hold'], outcome: ProbedHold['outcome']): ProbedHold => ({
  hold,
  owner: ME,
  outcome,
  evidence,
});
const owner = { command: COMMAND, owner: ME, leaseMs: LEASE_MS };
const nothing = (): string => 'oracle_nothing AS (SELECT 1)';
const finished = (f: Fixture): FinishedAttempt => ({
  attemptId: f.attemptId,
  eventId: f.eventId,
  orderId: f.orderId,
  type: COMMAND,
  topic: 'oracle',
  partition: 0,
  offset: '0',
});

/** A repository statement (in one of its modes) and the transitions of the table it makes. */
interface Statement {
  readonly name: string;
  readonly makes: readonly TransitionName[];
  run(fixture: Fixture): Promise<unknown>;
}

const STATEMENTS: readonly Statement[] = [
  {
    name: 'guard (record)',
    makes: ['begin'],
    run: (f) =>
      attempts.guard(sql, {
        ...owner,
        windowMs: WINDOW_MS,
        eventId: f.eventId,
        orderId: f.orderId,
        paymentId: f.paymentId,
        record: true,
      }),
  },
  {
    name: 'guardMany',
    makes: ['begin'],
    run: (f) =>
      attempts.guardMany(
        sql,
        { ...owner, events: [{ eventId: f.eventId, orderId: f.orderId, paymentId: f.paymentId }] },
        nothing,
      ),
  },
  {
    name: 'beginSent',
    makes: ['begin_sent'],
    run: (f) =>
      attempts.beginSent(
        { ...owner, events: [{ eventId: f.eventId, orderId: f.orderId, paymentId: f.paymentId }] },
        nothing,
      ),
  },
  {
    name: 'takeOver',
    makes: ['begin', 'retry_failed', 'restart_own', 'take_over_unsent'],
    run: (f) =>
      attempts.takeOver(sql, {
        ...owner,
        eventId: f.eventId,
        orderId: f.orderId,
        paymentId: f.paymentId,
      }),
  },
  { name: 'markSent', makes: ['mark_sent'], run: (f) => attempts.markSent([f.attemptId], ME) },
  {
    name: 'finish',
    makes: ['complete', 'complete_late'],
    run: (f) => attempts.finish(sql, [finished(f)]),
  },
  {
    name: 'markFailed',
    makes: ['fail'],
    run: (f) => attempts.markFailed(sql, f.attemptId, 'ORACLE.FAILED', ME),
  },
  {
    name: 'failProbed',
    makes: ['fail_probed'],
    run: (f) =>
      attempts.failProbed(
        sql,
        f.attemptId,
        'ORACLE.FAILED',
        probed('own', 'not_applied'),
        WINDOW_MS,
      ),
  },
  {
    // The table's `hold` is either hold: this worker's own (after its unclear call), or an
    // expired one's (any worker's probe once the lease ran out).
    name: 'holdForLateEffect (hold own, else hold expired)',
    makes: ['hold'],
    run: async (f) =>
      (await attempts.holdForLateEffect(
        sql,
        f.attemptId,
        probed('own', 'not_applied'),
        WINDOW_MS,
      )) ??
      attempts.holdForLateEffect(sql, f.attemptId, probed('expired', 'not_applied'), WINDOW_MS),
  },
  {
    name: 'markInDoubt',
    makes: ['in_doubt'],
    run: (f) => attempts.markInDoubt(sql, f.attemptId, 'ORACLE.IN_DOUBT'),
  },
  {
    name: 'markInDoubt (hold own)',
    makes: ['in_doubt_probed_own'],
    run: (f) =>
      attempts.markInDoubt(sql, f.attemptId, 'ORACLE.IN_DOUBT', probed('own', 'unreadable')),
  },
  {
    name: 'markInDoubt (hold expired)',
    makes: ['in_doubt_probed_expired'],
    run: (f) =>
      attempts.markInDoubt(sql, f.attemptId, 'ORACLE.IN_DOUBT', probed('expired', 'unreadable')),
  },
  ...(['own', 'expired'] as const).map((hold): Statement => ({
    name: `claimProbed (hold ${hold}), finish`,
    makes: [hold === 'own' ? 'complete_probed_own' : 'complete_probed_expired'],
    run: async (f) => {
      if (!(await attempts.claimProbed(sql, f.attemptId, probed(hold, 'took_effect')))) return;
      await attempts.finish(sql, [finished(f)]);
    },
  })),
  {
    name: 'takeOverProbed',
    makes: ['take_over_sent'],
    run: (f) => attempts.takeOverProbed(sql, f.attemptId, owner, null),
  },
  {
    name: 'takeOverProbed (probed)',
    makes: ['take_over_probed'],
    run: (f) =>
      attempts.takeOverProbed(sql, f.attemptId, owner, {
        outcome: 'not_applied',
        evidence,
        windowMs: WINDOW_MS,
      }),
  },
  {
    name: 'resolveForPayment',
    makes: ['resolve'],
    run: (f) => attempts.resolveForPayment(sql, f.paymentId),
  },
  {
    name: 'markNotTaken',
    makes: ['not_taken'],
    run: (f) => attempts.markNotTaken(sql, f.attemptId, 'ORACLE.NOT_TAKEN', WINDOW_MS),
  },
  {
    name: 'discard',
    makes: ['discard'],
    run: (f) =>
      CommandAttemptRepository.discard(sql, {
        eventId: f.eventId,
        orderId: f.orderId,
        command: COMMAND,
      }),
  },
];

/**
 * Where a statement may differ from the table, each with its written reason: none. (Issue
 * 28 found three; each was decided: a held attempt is refused by every statement that would
 * begin a new call of it, and may be settled without one, as the table says; not_taken waits
 * out the late-effect window in the table as in markNotTaken; discard is idempotent in the
 * table as in the statement, whose callers count on it.)
 * The test fails on any mismatch not listed here, and on a listed one that no longer occurs,
 * so that this list stays exact.
 */
const KNOWN: readonly {
  readonly why: string;
  readonly statements: readonly string[];
  readonly from: (situation: Situation) => boolean;
}[] = [];

/** Where the table says the statement takes the attempt (null: it refuses). */
function expected(statement: Statement, view: AttemptView): AttemptState | null {
  const targets = new Set(
    statement.makes.map((name) => transition(name, view, ME)).filter((to) => to !== null),
  );
  if (targets.size > 1) throw new Error(`${statement.name} has two targets from ${view.state}`);
  return [...targets][0] ?? null;
}

function describeSituation(situation: Situation): string {
  if (situation.state === 'none') return 'none';
  const whose = situation.owner === ME ? 'mine' : 'another’s';
  const lease = situation.leaseExpired ? 'lease run out' : 'lease running';
  const sent = situation.sent === 'never' ? 'never sent' : situation.sent.replace('_', ' ');
  return `${situation.state} (${whose}, ${lease}, ${sent})`;
}

describe('the attempt ledger against the protocol table', () => {
  it('covers every transition of the table with a statement', () => {
    const made = new Set(STATEMENTS.flatMap((statement) => statement.makes));
    expect(Object.keys(TRANSITIONS).filter((name) => !made.has(name as TransitionName))).toEqual(
      [],
    );
  });

  it('every statement, from every state, makes exactly the transition the table allows', async () => {
    const mismatches: string[] = [];
    const known = new Set<string>();
    let cases = 0;
    for (const situation of situations()) {
      for (const statement of STATEMENTS) {
        const fixture = await arrange(situation);
        const before = await viewNow(fixture);
        const rowBefore = await rowOf(fixture);
        await statement.run(fixture);
        const after = await viewNow(fixture);
        const made = (await rowOf(fixture)) === rowBefore ? null : after.state;
        const table = expected(statement, before);
        cases += 1;
        if (made === table) continue;
        const excused = KNOWN.find(
          (divergence) =>
            divergence.statements.includes(statement.name) && divergence.from(situation),
        );
        if (excused !== undefined) known.add(excused.why);
        else {
          mismatches.push(
            `${statement.name} from ${describeSituation(situation)}: ` +
              `the table says ${table ?? 'refused'}, the statement made ${made ?? 'no change'}`,
          );
        }
      }
    }
    process.stdout.write(`attempt protocol oracle: ${cases} cases\n`);
    expect(mismatches).toEqual([]);
    expect([...known].sort()).toEqual(KNOWN.map((divergence) => divergence.why).sort());
  });
});
