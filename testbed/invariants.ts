/**
 * The end-of-run invariants of the fault tests and the chaos campaign, checked against the
 * records of the parties themselves: the Payflow sandbox (GET /sandbox/payments), Postgres
 * (processed events, dead letters, attempts, payments, the outbox) and the Kafka topics
 * (status events, dead letters).
 *
 * - Every published event took effect (processed_events) or was dead-lettered with a
 *   reason (dead_letters and the .dlq topic with x-dlq-reason); none is lost.
 * - No duplicate payment at Payflow: at most one per payment request (by the per-payment
 *   webhook token in the callback URL) and per order no more than it requested; every
 *   payment created locally exists at Payflow. Refunds, installments and documents at
 *   Payflow are not doubled either.
 * - Status events (deduplicated by eventId: they are at least once): every one the outbox
 *   holds is on the topic, per order in the outbox's order; each event that took effect has
 *   exactly one outcome event of its type; no outcome twice under different eventIds.
 * - Calls in doubt: how each creation in doubt ended, and (when the calls that left the
 *   workers were recorded) none that never left its process.
 */
import pg from 'pg';
import { OUTCOME_OF, type PlannedEvent } from './order-load.js';
import { readTopicToEnd } from './kafka-io.js';
import { allSandboxPayments } from './sandbox-pages.js';

export interface InvariantInput {
  readonly databaseUrl: string;
  /** The sandbox's base URL (its control API is under /sandbox). */
  readonly sandboxUrl: string;
  readonly brokers: readonly string[];
  readonly topics: { readonly orders: string; readonly status: string; readonly dlq: string };
  /** Every event published (each once, whatever the producer resent). */
  readonly events: readonly PlannedEvent[];
  /**
   * Webhook tokens of the POST /api/payments requests that left the workers (seen by a
   * proxy in front of Payflow). When given, a creation in doubt whose request never left
   * its process is a failure.
   */
  readonly sentPaymentTokens?: ReadonlySet<string>;
}

export interface InDoubtCreation {
  readonly orderId: string;
  readonly eventId: string;
  /** resolved: created after all (a webhook named it); the others are still in doubt. */
  readonly ended: 'resolved' | 'in_doubt_exists_at_payflow' | 'in_doubt_not_at_payflow';
  readonly leftProcess: boolean | null;
  /** The attempt's error code (how it came to be in doubt) and when it was marked sent. */
  readonly errorCode: string | null;
  readonly sentAt: string | null;
}

export interface InvariantReport {
  readonly published: number;
  /**
   * Events the load producer handed to Kafka that are not on the order topic (its send
   * was acknowledged, or failed and was resent, yet the record is not there): a loss of
   * the test's own producer, not of the worker; left out of the other figures.
   */
  readonly neverOnTopic: number;
  readonly neverOnTopicSample: readonly string[];
  readonly orders: number;
  readonly tookEffect: number;
  readonly deadLettered: Record<string, number>;
  /** Dead letters with the reason in_doubt, by the event type they were for. */
  readonly inDoubtByType: Record<string, number>;
  readonly deadLetteredNotOnTopic: number;
  readonly lost: number;
  readonly lostSample: readonly string[];
  readonly payflowPayments: number;
  readonly duplicatePayments: number;
  /** Up to ten orders with a duplicate payment, for the investigation (their ids only). */
  readonly duplicatePaymentOrders: readonly string[];
  readonly paymentsMissingAtPayflow: number;
  readonly ordersWithoutPayment: Record<string, number>;
  readonly duplicateEffects: number;
  readonly status: {
    readonly read: number;
    readonly distinct: number;
    /** Copies of an eventId already read (allowed: at least once). */
    readonly redelivered: number;
    readonly missing: number;
    readonly repeated: number;
    readonly outOfOrder: number;
    /** A few orders out of order: their status events as read (type@outbox position). */
    readonly outOfOrderSample: readonly string[];
    readonly wrongOutcome: number;
    readonly unknown: number;
    readonly outboxPending: number;
  };
  readonly inDoubt: {
    readonly creations: readonly InDoubtCreation[];
    readonly otherCommands: number;
    readonly startedLeft: number;
    readonly neverLeftProcess: number;
  };
  readonly problems: readonly string[];
  readonly ok: boolean;
}

interface SandboxPayment {
  readonly id: string;
  readonly body: {
    readonly payment?: { readonly internalRef?: string };
    readonly callback?: { readonly url?: string };
  };
  readonly installments: readonly unknown[] | null;
  readonly refunds: readonly unknown[] | null;
  readonly documents: readonly unknown[] | null;
}

interface StatusValue {
  readonly eventId?: string;
  readonly type?: string;
  readonly orderId?: string;
  readonly data?: { readonly sourceEventId?: string | null };
}

/** The webhook token of a callback URL `…/webhooks/payflow/{token}/{kind}`. */
export function tokenOfCallback(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const match = /\/webhooks\/payflow\/([^/]+)\//.exec(url);
  return match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
}

function parse<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** The same counts, largest first (then by name): the order the table prints them in. */
function sortedByCount(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(counts).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)),
  );
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

export async function checkInvariants(input: InvariantInput): Promise<InvariantReport> {
  const problems: string[] = [];
  const planned = new Map(input.events.map((event) => [event.eventId, event]));
  const orders = new Set(input.events.map((event) => event.orderId));

  // ---- the sandbox's records
  const allPayments = await allSandboxPayments<SandboxPayment>(input.sandboxUrl);
  const remote = allPayments.filter((payment) =>
    orders.has(payment.body.payment?.internalRef ?? ''),
  );
  const remoteByToken = new Map<string, SandboxPayment[]>();
  const remoteByOrder = new Map<string, SandboxPayment[]>();
  for (const payment of remote) {
    const token = tokenOfCallback(payment.body.callback?.url) ?? `(none) ${payment.id}`;
    remoteByToken.set(token, [...(remoteByToken.get(token) ?? []), payment]);
    const order = payment.body.payment?.internalRef ?? '';
    remoteByOrder.set(order, [...(remoteByOrder.get(order) ?? []), payment]);
  }

  // ---- Postgres's records
  const client = new pg.Client({ connectionString: input.databaseUrl });
  await client.connect();
  let processed: Set<string>;
  let letters: { event_id: string | null; reason: string }[];
  let payments: { order_id: string; event_id: string | null; state: string; token: string }[];
  let attempts: {
    event_id: string;
    order_id: string;
    command: string;
    state: string;
    payment_state: string | null;
    token: string | null;
    error_code: string | null;
    sent_at: string | null;
  }[];
  let outbox: { id: string; key: string | null; value: string; published: boolean }[];
  try {
    processed = new Set(
      (
        await client.query<{ event_id: string }>('SELECT event_id::text FROM processed_events')
      ).rows.map((row) => row.event_id),
    );
    letters = (
      await client.query<{ event_id: string | null; reason: string }>(
        'SELECT event_id, reason FROM dead_letters',
      )
    ).rows;
    payments = (
      await client.query<{
        order_id: string;
        event_id: string | null;
        state: string;
        token: string;
      }>('SELECT order_id, event_id::text, state, webhook_token AS token FROM payments')
    ).rows;
    attempts = (
      await client.query<{
        event_id: string;
        order_id: string;
        command: string;
        state: string;
        payment_state: string | null;
        token: string | null;
        error_code: string | null;
        sent_at: string | null;
      }>(
        `SELECT a.event_id::text, a.order_id, a.command, a.state, p.state AS payment_state,
                p.webhook_token AS token, a.error_code, a.sent_at::text
           FROM command_attempts a LEFT JOIN payments p ON p.id = a.payment_id
          WHERE a.state IN ('in_doubt', 'resolved', 'started') OR p.state = 'in_doubt'`,
      )
    ).rows;
    outbox = (
      await client.query<{ id: string; key: string | null; value: string; published: boolean }>(
        `SELECT id::text, key, convert_from(value, 'UTF8') AS value,
                published_at IS NOT NULL AS published
           FROM outbox WHERE topic = $1 ORDER BY outbox.id`,
        [input.topics.status],
      )
    ).rows;
  } finally {
    await client.end();
  }

  // ---- the topics
  const [statusRecords, dlqRecords, orderRecords] = await Promise.all([
    readTopicToEnd(input.brokers, input.topics.status),
    readTopicToEnd(input.brokers, input.topics.dlq),
    readTopicToEnd(input.brokers, input.topics.orders),
  ]);
  const onTopic = new Set<string>();
  for (const record of orderRecords) {
    const eventId = parse<{ eventId?: string }>(record.value)?.eventId;
    if (eventId !== undefined) onTopic.add(eventId);
  }
  const neverOnTopicSample: string[] = [];
  let neverOnTopic = 0;
  for (const event of input.events) {
    if (onTopic.has(event.eventId)) continue;
    neverOnTopic++;
    if (neverOnTopicSample.length < 10) {
      neverOnTopicSample.push(`${event.orderId} ${event.type} ${event.eventId}`);
    }
  }

  // ---- every event took effect or was dead-lettered with a reason
  const letterOf = new Map<string, string>();
  for (const letter of letters) {
    if (letter.event_id !== null && planned.has(letter.event_id)) {
      letterOf.set(letter.event_id, letter.reason);
    }
  }
  const dlqReasons = new Map<string, string>();
  for (const record of dlqRecords) {
    const eventId = parse<{ eventId?: string }>(record.value)?.eventId;
    const reason = record.headers['x-dlq-reason'];
    if (eventId !== undefined && reason !== undefined && reason !== '') {
      dlqReasons.set(eventId, reason);
    }
  }
  let tookEffect = 0;
  let lost = 0;
  const lostSample: string[] = [];
  const deadLettered: Record<string, number> = {};
  const inDoubtByType: Record<string, number> = {};
  let deadLetteredNotOnTopic = 0;
  for (const event of input.events) {
    const reason = letterOf.get(event.eventId);
    if (reason !== undefined) {
      bump(deadLettered, reason);
      if (reason === 'in_doubt') bump(inDoubtByType, event.type);
      if (!dlqReasons.has(event.eventId)) deadLetteredNotOnTopic++;
    } else if (processed.has(event.eventId)) {
      tookEffect++;
    } else if (!onTopic.has(event.eventId)) {
      // never published: counted as neverOnTopic
    } else {
      lost++;
      if (lostSample.length < 10)
        lostSample.push(`${event.orderId} ${event.type} ${event.eventId}`);
    }
  }
  if (lost > 0) problems.push(`${lost} event(s) neither took effect nor were dead-lettered`);
  if (deadLetteredNotOnTopic > 0) {
    problems.push(
      `${deadLetteredNotOnTopic} dead letter(s) not on ${input.topics.dlq} with a reason`,
    );
  }

  // ---- payments at Payflow: none doubled, none missing
  const requestsOf = new Map<string, number>();
  const requestOf = new Map<string, PlannedEvent>();
  for (const event of input.events) {
    if (event.type === 'order.payment_requested') {
      requestsOf.set(event.orderId, (requestsOf.get(event.orderId) ?? 0) + 1);
      if (!requestOf.has(event.orderId)) requestOf.set(event.orderId, event);
    }
  }
  // Per order: payments beyond one per request token, or beyond the requests it made.
  let duplicatePayments = 0;
  const duplicatePaymentOrders: string[] = [];
  for (const [order, list] of remoteByOrder) {
    const tokens = new Set(list.map((payment) => tokenOfCallback(payment.body.callback?.url)));
    const extra = Math.max(
      list.length - tokens.size,
      list.length - (requestsOf.get(order) ?? 0),
      0,
    );
    duplicatePayments += extra;
    if (extra > 0 && duplicatePaymentOrders.length < 10) duplicatePaymentOrders.push(order);
  }
  const localOrders = new Set(payments.map((payment) => payment.order_id));
  let paymentsMissingAtPayflow = 0;
  for (const payment of payments) {
    if (!orders.has(payment.order_id)) continue;
    if (payment.state === 'created' || payment.state === 'cancelled') {
      if (!remoteByToken.has(payment.token)) paymentsMissingAtPayflow++;
    }
  }
  const ordersWithoutPayment: Record<string, number> = {};
  for (const order of orders) {
    if ((remoteByOrder.get(order)?.length ?? 0) > 0) continue;
    const request = requestOf.get(order);
    const reason =
      request === undefined
        ? 'no request'
        : !onTopic.has(request.eventId)
          ? 'request never on the order topic'
          : (letterOf.get(request.eventId) ??
            (localOrders.has(order) ? 'created locally, not at Payflow' : 'not processed'));
    bump(ordersWithoutPayment, reason);
  }
  if (duplicatePayments > 0) {
    problems.push(
      `${duplicatePayments} duplicate payment(s) at Payflow (orders ${duplicatePaymentOrders.join(', ')})`,
    );
  }
  if (paymentsMissingAtPayflow > 0) {
    problems.push(`${paymentsMissingAtPayflow} payment(s) created locally but not at Payflow`);
  }
  let duplicateEffects = 0;
  for (const payment of remote) {
    duplicateEffects +=
      Math.max(0, (payment.refunds?.length ?? 0) - 1) +
      Math.max(0, (payment.installments?.length ?? 0) - 3) +
      Math.max(0, (payment.documents?.length ?? 0) - 2);
  }
  if (duplicateEffects > 0) {
    problems.push(
      `${duplicateEffects} refund(s), installment(s) or document(s) doubled at Payflow`,
    );
  }

  // ---- status events
  const outboxIndex = new Map<string, number>();
  const outboxSources = new Set<string>();
  const outcomes = new Map<string, { type: string; eventId: string }[]>();
  outbox.forEach((row, index) => {
    const value = parse<StatusValue>(row.value);
    if (value?.eventId === undefined) return;
    outboxIndex.set(value.eventId, index);
    const source = value.data?.sourceEventId;
    if (typeof source === 'string') outboxSources.add(source);
  });
  const seen = new Set<string>();
  const sequenceByKey = new Map<string, number[]>();
  const readByKey = new Map<string, string[]>();
  let redelivered = 0;
  let unknown = 0;
  for (const record of statusRecords) {
    const value = parse<StatusValue>(record.value);
    const eventId = value?.eventId;
    if (value === undefined || eventId === undefined) {
      unknown++;
      continue;
    }
    if (seen.has(eventId)) {
      redelivered++;
      continue;
    }
    seen.add(eventId);
    const index = outboxIndex.get(eventId);
    if (index === undefined) unknown++;
    else {
      const key = record.key ?? '';
      sequenceByKey.set(key, [...(sequenceByKey.get(key) ?? []), index]);
      readByKey.set(key, [
        ...(readByKey.get(key) ?? []),
        `${value.type ?? '?'}#${index}@${record.partition}:${record.offset}`,
      ]);
    }
    const source = value.data?.sourceEventId;
    if (source !== undefined && source !== null && value.type !== undefined) {
      outcomes.set(source, [...(outcomes.get(source) ?? []), { type: value.type, eventId }]);
    }
  }
  let missing = 0;
  for (const eventId of outboxIndex.keys()) if (!seen.has(eventId)) missing++;
  let outOfOrder = 0;
  const outOfOrderSample: string[] = [];
  for (const [key, sequence] of sequenceByKey) {
    for (let i = 1; i < sequence.length; i++) {
      if ((sequence[i] ?? 0) < (sequence[i - 1] ?? 0)) {
        outOfOrder++;
        if (outOfOrderSample.length < 5) {
          outOfOrderSample.push(`${key}: ${(readByKey.get(key) ?? []).join(' ')}`);
        }
        break;
      }
    }
  }
  let repeated = 0;
  let wrongOutcome = 0;
  for (const event of input.events) {
    const list = outcomes.get(event.eventId) ?? [];
    const byType = new Map<string, number>();
    for (const outcome of list) byType.set(outcome.type, (byType.get(outcome.type) ?? 0) + 1);
    for (const count of byType.values()) if (count > 1) repeated += count - 1;
    if (processed.has(event.eventId) && !letterOf.has(event.eventId)) {
      const expected = OUTCOME_OF[event.type];
      if ((byType.get(expected) ?? 0) === 0) {
        // An outcome the outbox holds but the topic lacks is counted above already.
        if (list.length === 0 && !outboxSources.has(event.eventId)) missing++;
        else if (list.length > 0) wrongOutcome++;
      }
    }
  }
  const outboxPending = outbox.filter((row) => !row.published).length;
  if (missing > 0) problems.push(`${missing} status event(s) missing`);
  if (repeated > 0) problems.push(`${repeated} status event(s) repeated under a new eventId`);
  if (outOfOrder > 0) problems.push(`${outOfOrder} order(s) with status events out of order`);
  if (wrongOutcome > 0) problems.push(`${wrongOutcome} event(s) with an unexpected outcome event`);
  if (unknown > 0) problems.push(`${unknown} status event(s) the outbox never held`);

  // ---- calls in doubt
  const creations: InDoubtCreation[] = [];
  let otherCommands = 0;
  let startedLeft = 0;
  for (const attempt of attempts) {
    if (!planned.has(attempt.event_id)) continue;
    if (attempt.state === 'started') {
      startedLeft++;
      continue;
    }
    if (attempt.token === null || !attempt.command.includes('payment_requested')) {
      otherCommands++;
      continue;
    }
    const atPayflow = remoteByToken.has(attempt.token);
    const ended: InDoubtCreation['ended'] =
      attempt.payment_state === 'created' || attempt.state === 'resolved'
        ? 'resolved'
        : atPayflow
          ? 'in_doubt_exists_at_payflow'
          : 'in_doubt_not_at_payflow';
    const leftProcess =
      input.sentPaymentTokens === undefined ? null : input.sentPaymentTokens.has(attempt.token);
    creations.push({
      orderId: attempt.order_id,
      eventId: attempt.event_id,
      ended,
      leftProcess,
      errorCode: attempt.error_code,
      sentAt: attempt.sent_at,
    });
  }
  const neverLeftProcess = creations.filter((creation) => creation.leftProcess === false).length;
  if (neverLeftProcess > 0) {
    problems.push(`${neverLeftProcess} creation(s) in doubt whose request never left the worker`);
  }
  if (startedLeft > 0) problems.push(`${startedLeft} attempt(s) still started at the end`);

  return {
    published: input.events.length,
    neverOnTopic,
    neverOnTopicSample,
    orders: orders.size,
    tookEffect,
    deadLettered,
    inDoubtByType: sortedByCount(inDoubtByType),
    deadLetteredNotOnTopic,
    lost,
    lostSample,
    payflowPayments: remote.length,
    duplicatePayments,
    duplicatePaymentOrders,
    paymentsMissingAtPayflow,
    ordersWithoutPayment,
    duplicateEffects,
    status: {
      read: statusRecords.length,
      distinct: seen.size,
      redelivered,
      missing,
      repeated,
      outOfOrder,
      outOfOrderSample,
      wrongOutcome,
      unknown,
      outboxPending,
    },
    inDoubt: { creations, otherCommands, startedLeft, neverLeftProcess },
    problems,
    ok: problems.length === 0,
  };
}

/** A readable summary of a report (one line per figure). */
export function formatReport(report: InvariantReport): string {
  const ended: Record<string, number> = {};
  for (const creation of report.inDoubt.creations) bump(ended, creation.ended);
  const rows: [string, string][] = [
    ['events published', String(report.published)],
    ['  of them never on the order topic (producer)', String(report.neverOnTopic)],
    ['orders', String(report.orders)],
    ['taken effect', String(report.tookEffect)],
    [
      'dead-lettered',
      Object.entries(report.deadLettered)
        .map(([reason, count]) => `${reason} ${count}`)
        .join(', ') || '0',
    ],
    [
      'in-doubt dead letters by event type',
      Object.keys(report.inDoubtByType).length === 0 ? '0' : '',
    ],
    ...Object.entries(report.inDoubtByType).map(([type, count]): [string, string] => [
      `  ${type}`,
      String(count),
    ]),
    ['lost events', String(report.lost)],
    ['payments at Payflow', String(report.payflowPayments)],
    ['duplicate payments', String(report.duplicatePayments)],
    ['created locally, missing at Payflow', String(report.paymentsMissingAtPayflow)],
    [
      'orders without a payment',
      Object.entries(report.ordersWithoutPayment)
        .map(([reason, count]) => `${reason} ${count}`)
        .join(', ') || '0',
    ],
    ['doubled refunds/installments/documents', String(report.duplicateEffects)],
    [
      'status events read / distinct / redelivered',
      `${report.status.read} / ${report.status.distinct} / ${report.status.redelivered}`,
    ],
    ['status events missing', String(report.status.missing)],
    ['status events repeated', String(report.status.repeated)],
    ['orders with status events out of order', String(report.status.outOfOrder)],
    ...report.status.outOfOrderSample.map((sample): [string, string] => ['  e.g.', sample]),
    ['outbox rows not published', String(report.status.outboxPending)],
    [
      'creations in doubt',
      `${report.inDoubt.creations.length}${
        report.inDoubt.creations.length === 0
          ? ''
          : ` (${Object.entries(ended)
              .map(([how, count]) => `${how} ${count}`)
              .join(', ')})`
      }`,
    ],
    ['other commands in doubt', String(report.inDoubt.otherCommands)],
    ['in doubt but never left the worker', String(report.inDoubt.neverLeftProcess)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}

/** The events that are on the order topic (a kafkajs producer may lose an acknowledged one). */
export async function eventsOnTopic(
  brokers: readonly string[],
  topic: string,
  events: readonly PlannedEvent[],
): Promise<PlannedEvent[]> {
  const present = new Set<string>();
  for (const record of await readTopicToEnd(brokers, topic)) {
    const eventId = parse<{ eventId?: string }>(record.value)?.eventId;
    if (eventId !== undefined) present.add(eventId);
  }
  return events.filter((event) => present.has(event.eventId));
}

/**
 * Waits until every event took effect or was dead-lettered and the outbox is empty (the
 * database may be restarting meanwhile: failed polls are tried again). Returns how many
 * events and outbox rows were still open at the end (0: settled).
 */
export async function waitSettled(
  databaseUrl: string,
  eventIds: readonly string[],
  timeoutMs: number,
  onPoll?: (open: number, outboxPending: number) => void,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let open = eventIds.length;
  let pending = 0;
  for (;;) {
    const client = new pg.Client({ connectionString: databaseUrl });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ open: number; pending: number }>(
        `SELECT (SELECT count(*)::int FROM unnest($1::uuid[]) AS e (id)
                  WHERE NOT EXISTS (SELECT 1 FROM processed_events p WHERE p.event_id = e.id)
                    AND NOT EXISTS (SELECT 1 FROM dead_letters d WHERE d.event_id = e.id::text))
                  AS open,
                (SELECT count(*)::int FROM outbox WHERE published_at IS NULL) AS pending`,
        [eventIds],
      );
      open = rows[0]?.open ?? open;
      pending = rows[0]?.pending ?? pending;
      onPoll?.(open, pending);
      if (open === 0 && pending === 0) return 0;
    } catch {
      // the database is restarting: ask again
    } finally {
      await client.end().catch(() => undefined);
    }
    if (Date.now() > deadline) return open + pending;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
