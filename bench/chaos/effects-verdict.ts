/**
 * The campaign's count of follow-up effects, per payment, in three records that must agree:
 * what Payflow holds (the sandbox's installments and documents, GET /sandbox/payments), what
 * the bridge told (installment.added, document.attached and document.removed on the status
 * topic; payment.created's installments) and what it recorded (its installments and
 * documents tables).
 *
 * A doubled effect is one more at Payflow than the order's events asked for: installments
 * beyond those of the payment request plus one per order.installment_added (a removed one
 * stays, CANCELLED); documents of a file name beyond its order.document_attached events less
 * the order.document_removed events that took effect. That is what a call sent again while
 * its first request was still to land produces, and it fails the run. Effects Payflow holds
 * that the bridge never reported, or reported but Payflow lacks, are counted beside it.
 *
 * It also counts status events told twice: the same (orderId, type, source event) under two
 * eventIds (testbed/invariants.ts fails the run on those as "repeated").
 */
import pg from 'pg';
import { z } from 'zod';
import { readTopicToEnd } from '../../testbed/kafka-io.js';
import type { PlannedEvent } from '../../testbed/order-load.js';
import { allSandboxPayments } from '../../testbed/sandbox-pages.js';

const sandboxPaymentSchema = z.object({
  id: z.string(),
  body: z.object({ payment: z.object({ internalRef: z.string().optional() }).optional() }),
  installments: z.array(z.object({ id: z.string() })).nullable(),
  documents: z.array(z.object({ id: z.string(), fileName: z.string() })),
});

const statusEventSchema = z.object({
  eventId: z.string(),
  type: z.string(),
  orderId: z.string(),
  data: z.record(z.string(), z.unknown()).optional(),
});
const sourceSchema = z.object({ sourceEventId: z.string().nullable().optional() });
const installmentAddedSchema = z.object({ installmentId: z.string() });
const documentDataSchema = z.object({ documentId: z.string() });
const paymentCreatedSchema = z.object({
  installments: z.array(z.object({ installmentId: z.string().nullable() })),
});

/** What the order's events ask of Payflow (their data, as published). */
const plannedDataSchema = z.object({
  data: z.object({
    installments: z.array(z.unknown()).optional(),
    documentRef: z.string().optional(),
    fileName: z.string().optional(),
  }),
});

const effectRowSchema = z.object({
  order_id: z.string(),
  payflow_id: z.string(),
  remote_id: z.string().nullable(),
  removed: z.boolean(),
});
const eventRowSchema = z.object({ event_id: z.string() });
const paymentRowSchema = z.object({ order_id: z.string(), payflow_id: z.string() });

export interface EffectFigures {
  /** At Payflow, on the payments the bridge knows. */
  readonly held: number;
  /** The most the orders' events asked for. */
  readonly asked: number;
  /** At Payflow beyond what was asked: fails the run. */
  readonly doubled: number;
  /** Held at Payflow, unknown to the bridge (neither told nor recorded). */
  readonly unreported: number;
  /** Told on the status topic (and not removed since), not held at Payflow. */
  readonly reportedNotHeld: number;
  /** Told on the topic but not recorded in the bridge's table, or the reverse. */
  readonly topicVsDatabase: number;
}

export interface EffectsVerdict {
  readonly paymentsCompared: number;
  readonly installments: EffectFigures;
  readonly documents: EffectFigures;
  readonly doubled: number;
  readonly doubledSample: readonly string[];
  /** (orderId, type, source event) published under more than one eventId. */
  readonly toldTwice: number;
  readonly toldTwiceSample: readonly string[];
  readonly problems: readonly string[];
}

interface Asked {
  installments: number;
  /** documentRef → file name. */
  readonly fileOf: Map<string, string>;
  /** file name → documents asked for (attached less removals that took effect). */
  readonly files: Map<string, number>;
}

interface Told {
  readonly installments: Set<string>;
  readonly documents: Set<string>;
  readonly removedDocuments: Set<string>;
}

interface Counter {
  held: number;
  asked: number;
  doubled: number;
  unreported: number;
  reportedNotHeld: number;
  topicVsDatabase: number;
}

const counter = (): Counter => ({
  held: 0,
  asked: 0,
  doubled: 0,
  unreported: 0,
  reportedNotHeld: 0,
  topicVsDatabase: 0,
});

function bumpMap(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function symmetricDifference(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let count = 0;
  for (const item of a) if (!b.has(item)) count++;
  for (const item of b) if (!a.has(item)) count++;
  return count;
}

/** Per order: what its events asked of Payflow. */
function askedByOrder(
  events: readonly PlannedEvent[],
  tookEffect: (eventId: string) => boolean,
): Map<string, Asked> {
  const asked = new Map<string, Asked>();
  const of = (orderId: string): Asked => {
    let entry = asked.get(orderId);
    if (entry === undefined) {
      entry = { installments: 0, fileOf: new Map(), files: new Map() };
      asked.set(orderId, entry);
    }
    return entry;
  };
  // Attachments first: a removal names only the ref, whose file name an attachment gave.
  const ordered = [...events].sort((a, b) => a.seq - b.seq);
  for (const event of ordered) {
    const { data } = plannedDataSchema.parse(JSON.parse(event.value));
    const entry = of(event.orderId);
    switch (event.type) {
      case 'order.payment_requested':
        entry.installments += data.installments?.length ?? 0;
        break;
      case 'order.installment_added':
        entry.installments += 1;
        break;
      case 'order.document_attached':
        if (data.documentRef !== undefined && data.fileName !== undefined) {
          entry.fileOf.set(data.documentRef, data.fileName);
          bumpMap(entry.files, data.fileName);
        }
        break;
      case 'order.document_removed': {
        const file =
          data.documentRef === undefined ? undefined : entry.fileOf.get(data.documentRef);
        if (file !== undefined && tookEffect(event.eventId)) bumpMap(entry.files, file, -1);
        break;
      }
      case 'order.cancelled':
      case 'order.installment_changed':
      case 'order.installment_removed':
      case 'order.marked_paid':
      case 'order.payment_resend_requested':
      case 'order.refund_requested':
      case 'order.terminal_receipt_requested':
        // Ask for no new installment or document (a removed installment stays, CANCELLED).
        break;
    }
  }
  return asked;
}

export async function checkEffects(input: {
  readonly databaseUrl: string;
  readonly sandboxUrl: string;
  readonly brokers: readonly string[];
  readonly statusTopic: string;
  readonly events: readonly PlannedEvent[];
}): Promise<EffectsVerdict> {
  const orders = new Set(input.events.map((event) => event.orderId));

  // ---- the bridge's tables
  const client = new pg.Client({ connectionString: input.databaseUrl });
  await client.connect();
  let tookEffect: Set<string>;
  let bridgePayment: Map<string, string>;
  let recordedInstallments: z.output<typeof effectRowSchema>[];
  let recordedDocuments: z.output<typeof effectRowSchema>[];
  try {
    const ids = input.events.map((event) => event.eventId);
    const processed = await client.query(
      `SELECT event_id::text FROM processed_events WHERE event_id = ANY($1::uuid[])
       EXCEPT SELECT event_id FROM dead_letters WHERE event_id IS NOT NULL`,
      [ids],
    );
    tookEffect = new Set(processed.rows.map((row) => eventRowSchema.parse(row).event_id));
    const payments = await client.query(
      'SELECT order_id, payflow_id FROM payments WHERE payflow_id IS NOT NULL',
    );
    bridgePayment = new Map(
      payments.rows
        .map((row) => paymentRowSchema.parse(row))
        .filter((row) => orders.has(row.order_id))
        .map((row) => [row.payflow_id, row.order_id]),
    );
    const effects = (table: 'installments' | 'documents', column: string) =>
      client.query(
        `SELECT p.order_id, p.payflow_id, t.${column} AS remote_id,
                t.removed_at IS NOT NULL AS removed
           FROM ${table} t JOIN payments p ON p.id = t.payment_id
          WHERE p.payflow_id IS NOT NULL`,
      );
    recordedInstallments = (await effects('installments', 'payflow_installment_id')).rows.map(
      (row) => effectRowSchema.parse(row),
    );
    recordedDocuments = (await effects('documents', 'payflow_document_id')).rows.map((row) =>
      effectRowSchema.parse(row),
    );
  } finally {
    await client.end();
  }
  const asked = askedByOrder(input.events, (eventId) => tookEffect.has(eventId));

  // ---- what the bridge told: status events, once per eventId
  const told = new Map<string, Told>();
  const toldOf = (orderId: string): Told => {
    let entry = told.get(orderId);
    if (entry === undefined) {
      entry = { installments: new Set(), documents: new Set(), removedDocuments: new Set() };
      told.set(orderId, entry);
    }
    return entry;
  };
  const eventIdsOf = new Map<string, Set<string>>();
  const seen = new Set<string>();
  for (const record of await readTopicToEnd(input.brokers, input.statusTopic)) {
    let parsed: z.output<typeof statusEventSchema>;
    try {
      parsed = statusEventSchema.parse(JSON.parse(record.value));
    } catch {
      continue; // testbed/invariants.ts counts what the outbox never held
    }
    if (seen.has(parsed.eventId)) continue;
    seen.add(parsed.eventId);
    const data = parsed.data ?? {};
    const source = sourceSchema.safeParse(data).data?.sourceEventId;
    if (typeof source === 'string') {
      const key = `${parsed.orderId} ${parsed.type} ${source}`;
      eventIdsOf.set(key, (eventIdsOf.get(key) ?? new Set()).add(parsed.eventId));
    }
    if (!orders.has(parsed.orderId)) continue;
    const entry = toldOf(parsed.orderId);
    if (parsed.type === 'installment.added') {
      const added = installmentAddedSchema.safeParse(data);
      if (added.success) entry.installments.add(added.data.installmentId);
    } else if (parsed.type === 'payment.created') {
      for (const installment of paymentCreatedSchema.safeParse(data).data?.installments ?? []) {
        if (installment.installmentId !== null) entry.installments.add(installment.installmentId);
      }
    } else if (parsed.type === 'document.attached' || parsed.type === 'document.removed') {
      const document = documentDataSchema.safeParse(data);
      if (!document.success) continue;
      if (parsed.type === 'document.attached') entry.documents.add(document.data.documentId);
      else entry.removedDocuments.add(document.data.documentId);
    }
  }
  const toldTwiceKeys = [...eventIdsOf].filter(([, ids]) => ids.size > 1);

  // ---- per payment the bridge knows: Payflow against the bridge
  const recordedOf = (rows: readonly z.output<typeof effectRowSchema>[]) => {
    const byPayment = new Map<string, { all: Set<string>; live: Set<string> }>();
    for (const row of rows) {
      if (row.remote_id === null) continue;
      const entry = byPayment.get(row.payflow_id) ?? { all: new Set(), live: new Set() };
      entry.all.add(row.remote_id);
      if (!row.removed) entry.live.add(row.remote_id);
      byPayment.set(row.payflow_id, entry);
    }
    return byPayment;
  };
  const recordedInstallmentsOf = recordedOf(recordedInstallments);
  const recordedDocumentsOf = recordedOf(recordedDocuments);
  const installments = counter();
  const documents = counter();
  const doubledSample: string[] = [];
  let compared = 0;
  const remote = await allSandboxPayments<unknown>(input.sandboxUrl);
  for (const raw of remote) {
    const payment = sandboxPaymentSchema.parse(raw);
    const orderId = bridgePayment.get(payment.id);
    if (orderId === undefined) continue; // not the bridge's payment (duplicates count apart)
    compared++;
    const wanted = asked.get(orderId);
    const toldHere = told.get(orderId);
    const recordedI = recordedInstallmentsOf.get(payment.id);
    const recordedD = recordedDocumentsOf.get(payment.id);
    const notes: string[] = [];

    const heldInstallments = new Set((payment.installments ?? []).map((item) => item.id));
    const askedInstallments = wanted?.installments ?? 0;
    const toldInstallments = toldHere?.installments ?? new Set<string>();
    const doubledInstallments = Math.max(0, heldInstallments.size - askedInstallments);
    installments.held += heldInstallments.size;
    installments.asked += askedInstallments;
    installments.doubled += doubledInstallments;
    for (const id of heldInstallments) {
      if (!toldInstallments.has(id) && !(recordedI?.all.has(id) ?? false))
        installments.unreported++;
    }
    for (const id of toldInstallments)
      if (!heldInstallments.has(id)) installments.reportedNotHeld++;
    installments.topicVsDatabase += symmetricDifference(
      toldInstallments,
      recordedI?.all ?? new Set(),
    );
    if (doubledInstallments > 0) {
      notes.push(`installments held ${heldInstallments.size}, asked ${askedInstallments}`);
    }

    const heldByFile = new Map<string, number>();
    for (const document of payment.documents) bumpMap(heldByFile, document.fileName);
    const files = new Set([...heldByFile.keys(), ...(wanted?.files.keys() ?? [])]);
    for (const file of files) {
      const held = heldByFile.get(file) ?? 0;
      const allowed = Math.max(0, wanted?.files.get(file) ?? 0);
      documents.held += held;
      documents.asked += allowed;
      const doubled = Math.max(0, held - allowed);
      documents.doubled += doubled;
      if (doubled > 0) notes.push(`documents ${file} held ${held}, asked ${allowed}`);
    }
    const toldLive = new Set(
      [...(toldHere?.documents ?? [])].filter(
        (id) => !(toldHere?.removedDocuments.has(id) ?? false),
      ),
    );
    const heldDocuments = new Set(payment.documents.map((document) => document.id));
    for (const id of heldDocuments) {
      if (!(toldHere?.documents.has(id) ?? false) && !(recordedD?.all.has(id) ?? false)) {
        documents.unreported++;
      }
    }
    for (const id of toldLive) if (!heldDocuments.has(id)) documents.reportedNotHeld++;
    documents.topicVsDatabase += symmetricDifference(toldLive, recordedD?.live ?? new Set());

    if (notes.length > 0 && doubledSample.length < 10) {
      doubledSample.push(`${orderId} (${payment.id}): ${notes.join('; ')}`);
    }
  }

  const doubled = installments.doubled + documents.doubled;
  const problems: string[] = [];
  if (doubled > 0) {
    problems.push(
      `${doubled} effect(s) doubled at Payflow (${installments.doubled} installment(s), ` +
        `${documents.doubled} document(s) beyond what the orders' events asked for)`,
    );
  }
  return {
    paymentsCompared: compared,
    installments,
    documents,
    doubled,
    doubledSample,
    toldTwice: toldTwiceKeys.length,
    toldTwiceSample: toldTwiceKeys
      .slice(0, 5)
      .map(([key, ids]) => `${key}: ${[...ids].join(', ')}`),
    problems,
  };
}
