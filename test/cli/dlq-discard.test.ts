/**
 * `payflow-bridge dlq discard` through the compiled binary, beside a real worker (real
 * Postgres, the run's Kafka, the sandbox over HTTP). Orders are blocked the way production
 * blocks them: an invalid creation dead-lettered with the order's next events parked
 * behind it, and a creation in doubt (the sandbox resets its connection). What counts is
 * what the other side holds: the sandbox's payments, the status topic, the dead letters.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { sqlOf } from '../../src/database/database.js';
import {
  anEnvelope,
  anOrderId,
  cancelledData,
  markedPaidData,
  paymentRequestedData,
} from '../support/builders.js';
import { openTestPool } from '../support/database.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import { sandboxControl } from '../support/sandbox.js';
import { sandboxPayments } from '../orders/support/pipeline.js';
import {
  buildCli,
  hoursAgo,
  insertDeadLetter,
  insertOrder,
  runBinary,
  type BinaryResult,
} from './cli-test-kit.js';

interface StatusEvent {
  readonly eventId: string;
  readonly type: string;
  readonly orderId: string;
  readonly paymentId: string | null;
  readonly data: Record<string, unknown>;
}

interface LetterRow {
  readonly eventId: string | null;
  readonly reason: string;
  readonly replayed: boolean;
  readonly discardedBy: string | null;
  readonly discardReason: string | null;
  readonly discarded: boolean;
}

let pipeline: Pipeline;
let status: TopicReader;
let db: pg.Pool;

beforeAll(async () => {
  [pipeline] = await Promise.all([
    startPipeline('cli_discard', { PAYFLOW_REQUEST_TIMEOUT: '2s' }),
    buildCli(),
  ]);
  db = openTestPool(pipeline.database.url, 2);
  [, status] = await Promise.all([
    pipeline.startWorker({ transport: { retry: { baseDelayMs: 50, maxDelayMs: 200 } } }),
    TopicReader.start(pipeline.kafka, pipeline.topics.status),
  ]);
}, 240_000);

afterAll(async () => {
  await status?.stop();
  await db?.end();
  await pipeline?.stop();
});

function cli(args: readonly string[]): Promise<BinaryResult> {
  return runBinary(args, {
    DATABASE_URL: pipeline.database.url,
    KAFKA_BROKERS: pipeline.cluster.bootstrapServers,
    TOPIC_ORDERS: pipeline.topics.orders,
    TOPIC_PAYMENT_STATUS: pipeline.topics.status,
    TOPIC_SETTLEMENTS: pipeline.topics.settlements,
  });
}

const eventsOf = (orderId: string): StatusEvent[] =>
  status.json<StatusEvent>().filter((event) => event.orderId === orderId);

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function lettersOf(orderId: string): Promise<LetterRow[]> {
  const { rows } = await db.query<LetterRow>(
    `SELECT event_id AS "eventId", reason, replayed_at IS NOT NULL AS replayed,
            discarded_at IS NOT NULL AS discarded, discarded_by AS "discardedBy",
            discard_reason AS "discardReason"
       FROM dead_letters WHERE order_id = $1 ORDER BY id`,
    [orderId],
  );
  return rows;
}

async function blocked(orderId: string): Promise<boolean> {
  const { rows } = await db.query<{ blocked: boolean }>(
    'SELECT blocked_at IS NOT NULL AS blocked FROM orders WHERE order_id = $1',
    [orderId],
  );
  return rows[0]?.blocked ?? false;
}

/** Everything the relay had to publish for the order is out (nothing pending in its outbox). */
async function published(orderId: string): Promise<void> {
  await until('the order’s outbox rows to be published', async () => {
    const { rows } = await db.query<{ pending: number }>(
      'SELECT count(*)::int AS pending FROM outbox WHERE key = $1 AND published_at IS NULL',
      [orderId],
    );
    return rows[0]?.pending === 0;
  });
}

/**
 * An invalid creation (no currency: invalid_event), then a corrected creation and a
 * cancellation, both parked behind it: the order is blocked.
 */
async function blockedByAnInvalidCreation(orderId: string) {
  const { currency: _omitted, ...invalid } = paymentRequestedData();
  const bad = anEnvelope('order.payment_requested', invalid as never, { orderId });
  const corrected = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
  const cancel = anEnvelope('order.cancelled', cancelledData(), { orderId });
  await pipeline.publish([bad, corrected, cancel].map((value) => ({ key: orderId, value })));
  await until('the three events to be dead-lettered', async () => {
    return (await lettersOf(orderId)).length === 3;
  });
  expect((await lettersOf(orderId)).map((letter) => [letter.eventId, letter.reason])).toEqual([
    [bad.eventId, 'invalid_event'],
    [corrected.eventId, 'blocked_by_earlier_failure'],
    [cancel.eventId, 'blocked_by_earlier_failure'],
  ]);
  expect(await blocked(orderId)).toBe(true);
  return { bad, corrected, cancel };
}

describe('dlq discard', () => {
  it('discards an invalid creation: event.discarded once, the parked events take effect in order', async () => {
    const orderId = anOrderId('DISCARD');
    const { bad, corrected, cancel } = await blockedByAnInvalidCreation(orderId);

    const run = await cli([
      'dlq',
      'discard',
      bad.eventId,
      '--reason',
      'sent without a currency; corrected by the next event',
      '--by',
      'kari',
    ]);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    expect(run.out).toContain(
      `Event ${bad.eventId} (order.payment_requested) of order ${orderId} discarded by kari: ` +
        'sent without a currency; corrected by the next event',
    );
    expect(run.out).toContain('(invalid_event) will never be replayed; event.discarded queued.');
    expect(run.out).toContain(
      'order unblocked; republished 2 dead letter(s) (blocked_by_earlier_failure 2).',
    );

    // The parked corrected creation and the cancellation take effect, in that order.
    await status.waitFor(() => eventsOf(orderId).length === 3);
    expect(eventsOf(orderId).map((event) => event.type)).toEqual([
      'event.discarded',
      'payment.created',
      'payment.cancelled',
    ]);
    expect(eventsOf(orderId)[0]).toMatchObject({
      paymentId: null,
      data: {
        eventId: bad.eventId,
        eventType: 'order.payment_requested',
        reason: 'sent without a currency; corrected by the next event',
        discardedBy: 'kari',
        supersededBy: null,
      },
    });
    expect(eventsOf(orderId)[2]?.data).toMatchObject({ sourceEventId: cancel.eventId });
    const atPayflow = await sandboxPayments(pipeline.sandbox, orderId);
    expect(atPayflow.map((payment) => payment.status)).toEqual(['REJECTED']);
    expect(eventsOf(orderId)[1]?.paymentId).toBe(atPayflow[0]?.id);

    expect(await lettersOf(orderId)).toEqual([
      {
        eventId: bad.eventId,
        reason: 'invalid_event',
        replayed: false,
        discarded: true,
        discardedBy: 'kari',
        discardReason: 'sent without a currency; corrected by the next event',
      },
      expect.objectContaining({ eventId: corrected.eventId, replayed: true, discarded: false }),
      expect.objectContaining({ eventId: cancel.eventId, replayed: true, discarded: false }),
    ]);
    expect(await blocked(orderId)).toBe(false);
  });

  it('changes nothing the second time, says so, and a replay never takes the discarded letter', async () => {
    const orderId = anOrderId('TWICE');
    const { bad } = await blockedByAnInvalidCreation(orderId);
    const first = await cli(['dlq', 'discard', bad.eventId, '--reason', 'duplicate of SO-9']);
    expect(first.code).toBe(0);
    await status.waitFor(() => eventsOf(orderId).length === 3);
    await published(orderId);
    const before = await lettersOf(orderId);

    const second = await cli(['dlq', 'discard', bad.eventId, '--reason', 'again', '--by', 'ola']);
    expect(second.err).toBe('');
    expect(second.code).toBe(0);
    expect(second.out.trim().split('\n')).toHaveLength(1);
    expect(second.out).toMatch(
      new RegExp(
        `^Event ${bad.eventId} .*: already discarded by \\S+ at 20\\d\\d-\\S+ ` +
          '\\(duplicate of SO-9\\); nothing changed\\.\\n$',
      ),
    );
    expect(await lettersOf(orderId)).toEqual(before);

    // Nothing of this order waits for a replay: the discarded letter is not taken again.
    const replay = await cli(['dlq', 'replay', '--order', orderId, '--dry-run']);
    expect(replay.code).toBe(0);
    expect(replay.out).toContain('nothing to replay');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(eventsOf(orderId).filter((event) => event.type === 'event.discarded')).toHaveLength(1);
    expect(await sandboxPayments(pipeline.sandbox, orderId)).toHaveLength(1);
  });

  it('refuses, in one line, a letter in doubt: those take a verdict', async () => {
    const orderId = anOrderId('DOUBT');
    await sandboxControl(pipeline.sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments',
      reset: true,
      afterProcessing: false,
      times: 1,
    });
    const creation = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    const later = anEnvelope('order.marked_paid', markedPaidData(), { orderId });
    await pipeline.publish([creation, later].map((value) => ({ key: orderId, value })));
    await until('both events to be dead-lettered', async () => {
      return (await lettersOf(orderId)).length === 2;
    });
    expect((await lettersOf(orderId)).map((letter) => letter.reason)).toEqual([
      'in_doubt',
      'blocked_by_earlier_failure',
    ]);
    const before = await lettersOf(orderId);

    const refused = await cli(['dlq', 'discard', creation.eventId, '--reason', 'never mind']);
    expect(refused.code).toBe(1);
    expect(refused.out).toBe('');
    expect(refused.err.trim().split('\n')).toHaveLength(1);
    expect(refused.err).toBe(
      `payflow-bridge: refused: event ${creation.eventId} (order.payment_requested) of order ` +
        `${orderId} is in doubt: those take a verdict: in-doubt resolve ${orderId}; nothing changed\n`,
    );
    expect(await lettersOf(orderId)).toEqual(before);
    expect(await blocked(orderId)).toBe(true);
    expect(eventsOf(orderId).map((event) => event.type)).toEqual(['payment.creation_failed']);
  });

  it('refuses an event that is not dead-lettered: unknown, or taken effect; and a bad command line', async () => {
    const orderId = anOrderId('APPLIED');
    const applied = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
    await pipeline.publish([{ key: orderId, value: applied }]);
    await status.waitFor(() => eventsOf(orderId).length === 1);

    const unknown = randomUUID();
    const notKnown = await cli(['dlq', 'discard', unknown, '--reason', 'x']);
    expect(notKnown.code).toBe(1);
    expect(notKnown.err).toBe(
      `payflow-bridge: refused: event ${unknown} is not dead-lettered: no dead letter has this ` +
        'event id; nothing changed\n',
    );
    const tookEffect = await cli(['dlq', 'discard', applied.eventId, '--reason', 'x']);
    expect(tookEffect.code).toBe(1);
    expect(tookEffect.err).toMatch(/is not dead-lettered: it took effect; nothing changed\n$/);

    for (const args of [
      ['dlq', 'discard', applied.eventId],
      ['dlq', 'discard', 'SO-1', '--reason', 'x'],
      ['dlq', 'discard', applied.eventId, '--reason', ' '],
    ]) {
      const usage = await cli(args);
      expect([args, usage.code]).toEqual([args, 2]);
      expect(usage.err.trim().split('\n')).toHaveLength(1);
    }
    expect(eventsOf(orderId).map((event) => event.type)).toEqual(['payment.created']);
  });

  it('finds a letter whose envelope could not be read by the id its value names, and one stored without an id', async () => {
    // An envelope without occurredAt: unreadable, but it names its eventId.
    const orderId = anOrderId('UNREADABLE');
    const { occurredAt: _omitted, ...unreadable } = anEnvelope(
      'order.payment_requested',
      paymentRequestedData(),
      { orderId },
    );
    await pipeline.publish([{ key: orderId, value: unreadable }]);
    await until('the unreadable event to be dead-lettered', async () => {
      return (await lettersOf(orderId)).length === 1;
    });
    expect(await lettersOf(orderId)).toEqual([
      expect.objectContaining({ eventId: unreadable.eventId, reason: 'invalid_event' }),
    ]);
    const run = await cli(['dlq', 'discard', unreadable.eventId, '--reason', 'no occurredAt']);
    expect(run.code).toBe(0);
    await status.waitFor(() => eventsOf(orderId).some((e) => e.type === 'event.discarded'));
    expect(await blocked(orderId)).toBe(false);

    // A letter stored before the sink read ids out of unreadable values (event_id null).
    const older = anOrderId('OLDER');
    const sql = sqlOf(db);
    await insertOrder(sql, older, { blocked: true });
    const letter = await insertDeadLetter(sql, {
      orderId: older,
      reason: 'invalid_event',
      failedAt: hoursAgo(30),
    });
    await db.query('UPDATE dead_letters SET event_id = NULL WHERE id = $1::bigint', [letter.id]);
    const old = await cli(['dlq', 'discard', letter.eventId, '--reason', 'stored long ago']);
    expect(old.err).toBe('');
    expect(old.code).toBe(0);
    expect(await lettersOf(older)).toEqual([
      expect.objectContaining({ eventId: letter.eventId, discarded: true }),
    ]);
    await status.waitFor(() => eventsOf(older).some((e) => e.type === 'event.discarded'));
  });
});
