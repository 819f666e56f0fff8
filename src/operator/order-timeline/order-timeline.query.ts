/**
 * The console's order page: everything payflow-bridge knows happened to one order, as one
 * list, newest last. A read model: it holds no SQL, it composes the reads of the tables'
 * repositories (each by an index on the order id, its payments' ids or the message key):
 *
 * - processed_events: the ERP events that took effect;
 * - dead_letters: the ERP events that did not (reason, error);
 * - command_attempts: the Payflow calls (command, answer, duration, in doubt or not);
 * - webhook_inbox: the webhooks received for its payments;
 * - outbox: the events published for it (status events keyed by the order id; settlement
 *   lines keyed by its Payflow payment id), while the outbox keeps them (OUTBOX_RETENTION);
 * - in_doubt_verdicts, operator_actions: what people decided and did;
 * - unexplained_effects: installments and documents found at Payflow that no event of the
 *   order explains (and, only when there are some, the payments' installments and documents,
 *   to tell those the bridge recorded after all).
 */
import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { Database, type Sql } from '../../database/database.js';
import { DeadLetterRepository } from '../../dead-letters/dead-letter.repository.js';
import {
  CommandAttemptRepository,
  type ClosedAttempt,
} from '../../orders/engine/attempts/command-attempt.repository.js';
import { InDoubtVerdictRepository } from '../../orders/in-doubt/in-doubt-verdict.repository.js';
import { OrderRepository } from '../../orders/order.repository.js';
import { ProcessedEventRepository } from '../../orders/processed-event.repository.js';
import { OutboxRepository, type WrittenMessage } from '../../outbox/outbox.repository.js';
import { DocumentRepository } from '../../payments/document.repository.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { UnexplainedEffectRepository } from '../../payments/unexplained-effects/unexplained-effect.repository.js';
import { WebhookInboxRepository } from '../../webhooks/inbox/webhook-inbox.repository.js';
import { OperatorActionRepository } from '../audit/operator-action.repository.js';
import { amountView, orderView, unexplainedEffectViews } from '../order-show/order-show.query.js';
import { effectLabel, type UnexplainedEffectView } from '../order-show/unexplained-effect.view.js';
import { sanitizeText } from '../masking/sanitize-text.js';
import { findingEntry, readOrderSettlement } from './order-settlement.query.js';
import {
  traceIdOf,
  type OrderTimeline,
  type TimelineEntry,
  type TimelineFact,
  type TimelineKind,
  type TimelineTone,
} from './order-timeline.view.js';

/** The envelope of a published event, as far as the timeline reads it. */
const publishedEvent = z.object({
  eventId: z.string().optional(),
  type: z.string().optional(),
  occurredAt: z.string().optional(),
  paymentId: z.string().nullable().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

/** Kinds in the order they are listed when two entries have the same time. */
const KIND_ORDER: readonly TimelineKind[] = [
  'erp_event',
  'payflow_call',
  'webhook',
  'status_event',
  'settlement_line',
  'settlement_finding',
  'dead_letter',
  'verdict',
  'console_action',
  'unexplained_effect',
];

function fact(label: string, value: string | number | null | undefined): TimelineFact[] {
  return value === null || value === undefined || value === ''
    ? []
    : [{ label, value: String(value) }];
}

function entry(
  at: Date,
  kind: TimelineKind,
  title: string,
  outcome: string,
  tone: TimelineTone,
  facts: readonly TimelineFact[],
  traceId: string | null = null,
): TimelineEntry {
  return { at: at.toISOString(), kind, title, outcome, tone, facts, traceId };
}

function durationText(from: Date, to: Date | null): string | null {
  if (to === null) return null;
  const ms = Math.max(0, to.getTime() - from.getTime());
  return ms < 10_000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function callTone(state: string): TimelineTone {
  switch (state) {
    case 'succeeded':
    case 'resolved':
      return 'ok';
    case 'in_doubt':
    case 'started':
      return 'warn';
    case 'failed':
      return 'bad';
    default:
      return 'info';
  }
}

/**
 * The trace id of each ERP event, as far as the messages written for it tell: a status
 * event names the event it came from (`data.sourceEventId`) and carries its trace; a
 * dead letter's copy is the event itself, with the trace it came with.
 */
function tracesOfEvents(messages: readonly WrittenMessage[]): Map<string, string> {
  const traces = new Map<string, string>();
  for (const message of messages) {
    const traceId = traceIdOf(message.traceparent);
    if (traceId === null) continue;
    const event = parsedEvent(message);
    const eventId = message.topic.endsWith('.dlq') ? event.eventId : event.data?.sourceEventId;
    if (typeof eventId === 'string' && !traces.has(eventId)) traces.set(eventId, traceId);
  }
  return traces;
}

function callEntry(attempt: ClosedAttempt, traceId: string | null): TimelineEntry {
  const inDoubt = attempt.state === 'in_doubt';
  const waiting =
    attempt.state === 'started' && attempt.heldUntil !== null
      ? `waiting for a late effect until ${attempt.heldUntil.toISOString()}`
      : null;
  return entry(
    attempt.startedAt,
    'payflow_call',
    `Payflow call for ${attempt.command}`,
    waiting ??
      (attempt.errorCode === null ? attempt.state : `${attempt.state} (${attempt.errorCode})`),
    callTone(attempt.state),
    [
      ...fact('Attempt', attempt.attemptId),
      ...fact('Event id', attempt.eventId),
      ...fact('Answer', attempt.errorCode ?? (attempt.state === 'succeeded' ? 'ok' : null)),
      ...fact('Duration', durationText(attempt.sentAt ?? attempt.startedAt, attempt.finishedAt)),
      ...fact('Sent', attempt.sentAt?.toISOString()),
      ...fact('In doubt', inDoubt ? 'yes' : 'no'),
      ...fact('Late effect', waiting),
      ...fact('Payment', attempt.paymentId),
      ...fact(
        'Probe',
        attempt.probeOutcome === null
          ? null
          : `${attempt.probeOutcome}${attempt.probeEvidence === null ? '' : `: ${sanitizeText(attempt.probeEvidence.shown)}`}`,
      ),
    ],
    traceId,
  );
}

/** An effect at Payflow that no event of the order explains, when it was first seen. */
function effectEntry(
  effect: UnexplainedEffectView,
  payflowPaymentId: string | null,
): TimelineEntry {
  const explained = effect.explainedBy !== null;
  return entry(
    new Date(effect.firstSeenAt),
    'unexplained_effect',
    explained
      ? `${effectLabel(effect)} at Payflow, recorded by the bridge after it was found`
      : `${effectLabel(effect)} at Payflow that no event of this order explains`,
    explained ? 'explained since' : 'unexplained',
    explained ? 'info' : 'bad',
    [
      ...fact('Payflow payment', payflowPaymentId),
      ...fact('Kind', effect.kind),
      ...fact('Payflow id', effect.payflowId),
      ...fact(
        'Amount',
        effect.gross === null ? null : `${effect.gross.amount} ${effect.gross.currency}`,
      ),
      ...fact('Date', effect.dueDate),
      ...fact('Status at Payflow', effect.providerStatus),
      ...fact('File name', effect.fileName),
      ...fact('First seen by', effect.firstSeenBy),
      ...fact('Last seen', effect.lastSeenAt),
      ...fact('Explained by', effect.explainedBy),
    ],
  );
}

/** A scalar of a published event's data, as text. */
function scalar(value: unknown): string | null {
  if (typeof value === 'string') return sanitizeText(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

function parsedEvent(message: WrittenMessage): z.infer<typeof publishedEvent> {
  try {
    const parsed = publishedEvent.safeParse(JSON.parse(message.value.toString('utf8')));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

function publishedEntry(message: WrittenMessage, orderId: string): TimelineEntry {
  const event = parsedEvent(message);
  const type = message.eventType ?? event.type ?? 'event';
  const data = event.data ?? {};
  const outcome = message.publishedAt === null ? 'waiting to be published' : 'published';
  const tone: TimelineTone = message.publishedAt === null ? 'warn' : 'ok';
  const traceId = traceIdOf(message.traceparent);
  const base = [
    ...fact('Topic', message.topic),
    ...fact('Published', message.publishedAt?.toISOString()),
  ];
  if (message.topic.endsWith('.dlq')) {
    // The copy of a dead-lettered event for the dead-letter topic (its row is listed too).
    return entry(
      message.createdAt,
      'dead_letter',
      `${type} sent to the dead-letter topic`,
      outcome,
      message.publishedAt === null ? 'warn' : 'info',
      base,
      traceId,
    );
  }
  if (type === 'settlement.line') {
    const currency = scalar(data.currency) ?? '';
    return entry(
      message.createdAt,
      'settlement_line',
      `Settlement line for payment ${event.paymentId ?? message.key ?? '-'}`,
      outcome,
      tone,
      [
        ...fact('Payment', event.paymentId ?? message.key),
        ...fact('Type', scalar(data.transactionType)),
        ...fact(
          'Gross',
          data.grossAmount === undefined ? null : `${scalar(data.grossAmount)} ${currency}`,
        ),
        ...fact(
          'Fee',
          data.feeAmount === undefined ? null : `${scalar(data.feeAmount)} ${currency}`,
        ),
        ...fact(
          'Net',
          data.netAmount === undefined ? null : `${scalar(data.netAmount)} ${currency}`,
        ),
        ...fact('Settlement date', scalar(data.settlementDate)),
        ...fact('Booked', scalar(data.bookedAt)),
        ...fact('File', scalar(data.fileId)),
        ...base,
      ],
      traceId,
    );
  }
  const facts = Object.entries(data)
    .filter(([name]) => name !== 'orderId' && name !== 'customer')
    .flatMap(([name, value]) => fact(name, scalar(value)))
    .slice(0, 8);
  return entry(
    message.createdAt,
    'status_event',
    `${type}${message.key === orderId ? '' : ` (key ${message.key ?? '-'})`}`,
    outcome,
    tone,
    [...facts, ...base],
    traceId,
  );
}

@Injectable()
export class OrderTimelineQuery {
  private readonly orders = new OrderRepository();
  private readonly payments = new PaymentRepository();
  private readonly processed = new ProcessedEventRepository();
  private readonly letters = new DeadLetterRepository();
  private readonly verdicts = new InDoubtVerdictRepository();
  private readonly outbox = new OutboxRepository();
  private readonly actions = new OperatorActionRepository();
  private readonly effects = new UnexplainedEffectRepository();
  private readonly installments = new InstallmentRepository();
  private readonly documents = new DocumentRepository();

  constructor(@Inject(Database) private readonly database: Database) {}

  /** The order's timeline, or null when nothing is known of the order. */
  async timeline(orderId: string): Promise<OrderTimeline | null> {
    return this.read(this.database.sql, orderId);
  }

  async read(sql: Sql, orderId: string): Promise<OrderTimeline | null> {
    const [[order], payments, events, letters, attempts, verdicts, actions, effects] =
      await Promise.all([
        this.orders.byIds(sql, [orderId]),
        this.payments.listForOrder(sql, orderId),
        this.processed.listForOrder(sql, orderId),
        this.letters.listForOrder(sql, orderId),
        CommandAttemptRepository.listForOrder(sql, orderId),
        this.verdicts.ofOrder(sql, orderId),
        this.actions.ofOrder(sql, orderId),
        this.effects.listForOrder(sql, orderId),
      ]);
    if (order === undefined && payments.length === 0 && letters.length === 0) return null;
    const paymentIds = payments.map((payment) => payment.id);
    const payflowIds = payments.flatMap((payment) =>
      payment.payflowId === null ? [] : [payment.payflowId],
    );
    const [webhooks, messages, installments, documents, settlement] = await Promise.all([
      paymentIds.length === 0 ? [] : WebhookInboxRepository.listForPayments(sql, paymentIds),
      this.outbox.listByKeys(sql, [orderId, ...payflowIds]),
      // Only to tell the effects the bridge recorded after all: read when there are some.
      effects.length === 0 ? [] : this.installments.listForPayments(sql, paymentIds),
      effects.length === 0 ? [] : this.documents.listForPayments(sql, paymentIds),
      readOrderSettlement(sql, payflowIds),
    ]);
    const payflowOf = new Map(payments.map((payment) => [payment.id, payment.payflowId]));
    const traces = tracesOfEvents(messages);
    const traceOf = (eventId: string | null): string | null =>
      eventId === null ? null : (traces.get(eventId) ?? null);

    const entries: TimelineEntry[] = [
      // At the moment it was read (cause first), not when its processing ended; rows kept
      // before read_at existed have only the latter.
      ...events.map((event) =>
        entry(
          event.readAt ?? event.processedAt,
          'erp_event',
          event.type,
          'processed',
          'ok',
          [
            ...fact('Event id', event.eventId),
            ...fact('Read from', `${event.topic}/${event.partition}@${event.offset}`),
            ...fact('Read', event.readAt?.toISOString()),
            ...fact('Processed', event.processedAt.toISOString()),
          ],
          traceOf(event.eventId),
        ),
      ),
      ...letters.map((letter) =>
        entry(
          letter.failedAt,
          'dead_letter',
          `${letter.eventType ?? 'unreadable event'} dead-lettered`,
          letter.replayedAt === null ? letter.reason : `${letter.reason}, replayed`,
          letter.replayedAt === null ? 'bad' : 'info',
          [
            ...fact('Event id', letter.eventId),
            ...fact('Reason', letter.reason),
            ...fact('Error', sanitizeText(letter.error)),
            ...fact('Attempts', letter.attempts),
            ...fact('Read from', `${letter.topic}/${letter.partition}@${letter.offset}`),
            ...fact('Replayed', letter.replayedAt?.toISOString()),
          ],
          traceOf(letter.eventId),
        ),
      ),
      ...attempts.map((attempt) => callEntry(attempt, traceOf(attempt.eventId))),
      ...webhooks.map((webhook) =>
        entry(
          webhook.receivedAt,
          'webhook',
          `Webhook ${webhook.kind}`,
          webhook.processedAt === null
            ? webhook.lastError === null
              ? 'waiting'
              : 'failing'
            : webhook.lastError === null
              ? 'processed'
              : 'processed with error',
          webhook.processedAt === null ? 'warn' : webhook.lastError === null ? 'ok' : 'bad',
          [
            ...fact('Payflow payment', payflowOf.get(webhook.paymentId)),
            ...fact('Processed', webhook.processedAt?.toISOString()),
            ...fact('Duplicates', webhook.duplicates === 0 ? null : webhook.duplicates),
            ...fact('Attempts', webhook.attempts),
            ...fact('Error', webhook.lastError === null ? null : sanitizeText(webhook.lastError)),
          ],
          traceIdOf(webhook.traceparent),
        ),
      ),
      ...messages.map((message) => publishedEntry(message, orderId)),
      ...settlement.findings.map(findingEntry),
      ...verdicts.map((verdict) =>
        entry(
          verdict.decidedAt,
          'verdict',
          `Verdict on ${verdict.command}: ${verdict.verdict.replace('_', ' ')}`,
          verdict.replayedAt === null ? 'recorded' : 'recorded, events replayed',
          'info',
          [
            ...fact('By', sanitizeText(verdict.decidedBy)),
            ...fact('Event id', verdict.eventId),
            ...fact('Payflow payment', verdict.payflowId),
            ...fact('Events replayed', verdict.replayedLetters),
          ],
        ),
      ),
      ...[...unexplainedEffectViews(effects, installments, documents)].flatMap(
        ([paymentId, views]) =>
          views.map((view) => effectEntry(view, payflowOf.get(paymentId) ?? null)),
      ),
      // What people did; who merely looked (an opened dead letter) is in the audit, not here.
      ...actions
        .filter((action) => action.action !== 'view_dead_letter')
        .map((action) =>
          entry(
            action.performedAt,
            'console_action',
            `${action.action.replaceAll('_', ' ')} by ${sanitizeText(action.actor)}`,
            action.outcome,
            action.outcome === 'done' ? 'info' : 'warn',
            [
              ...fact(
                'Who',
                action.actorVerified
                  ? `signed in through the OpenID provider (subject ${sanitizeText(action.actorSubject ?? '')})`
                  : 'name typed at the token sign-in (not verified)',
              ),
              ...fact('From', action.clientAddress),
              ...Object.entries(action.details).flatMap(([name, value]) =>
                fact(name, value === null ? null : sanitizeText(String(value))),
              ),
            ],
          ),
        ),
    ];
    entries.sort(
      (a, b) => a.at.localeCompare(b.at) || KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind),
    );
    return {
      order: orderView(order, orderId),
      payments: payments.map((payment) => ({
        id: payment.id,
        payflowId: payment.payflowId,
        state: payment.state,
        status: payment.status,
        total: amountView(payment.totalGross, payment.currency),
      })),
      entries,
      settlement,
    };
  }
}
