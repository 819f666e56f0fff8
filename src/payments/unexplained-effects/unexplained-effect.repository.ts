/**
 * The only owner of the `unexplained_effects` table's SQL, and the one read a check of
 * Payflow's holdings needs: what the bridge has recorded of the payments being checked.
 *
 * `recordsOf` reads three tables it does not own (installments, documents, command_attempts),
 * read-only, in one statement: a check runs after every webhook's refetch, so it must cost
 * one round trip, and one statement sees one snapshot, so an attempt that completes while it
 * runs is seen either still live or with its row, never neither. Each table's part is kept
 * apart below (`installmentsPart`, `documentsPart`, `liveAttemptsPart`): each belongs in its
 * table's repository (InstallmentRepository, DocumentRepository, CommandAttemptRepository) as
 * a part of one statement, as payments/statement.ts does for writes. They wait here only
 * because the change that made them was not to touch those files (the attempt ledger was
 * being changed for the late-effect wait at the same time): moving them is mechanical.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { queryRows } from '../../database/parsed-rows.js';
import { timestampField } from '../../database/row-schemas.js';
import { render } from '../../database/statement.js';
import {
  EFFECT_KINDS,
  SIGHTING_SOURCES,
  type BridgeRecords,
  type SightingSource,
  type UnboundInstallment,
  type UnexplainedEffect,
} from './unexplained-effects.matching.js';

/** A payment being checked: payments.id and its order. */
export interface CheckedPayment {
  readonly id: string;
  readonly orderId: string;
}

/** An effect to record (or to see again), of one payment. */
export interface Sighting {
  readonly payment: CheckedPayment;
  readonly effect: UnexplainedEffect;
}

/** What recording a sighting did: `firstSeen` when this read recorded it. */
export interface RecordedSighting {
  readonly id: string;
  readonly paymentId: string;
  readonly kind: UnexplainedEffect['kind'];
  readonly payflowId: string;
  readonly firstSeen: boolean;
}

const minorText = z
  .string()
  .regex(/^-?\d+$/)
  .transform(BigInt);

const recordRow = z.discriminatedUnion('what', [
  z.object({
    what: z.literal('installment'),
    paymentId: z.string(),
    ref: z.string().nullable(),
    removed: z.boolean(),
    date: z.string(),
    gross: minorText,
  }),
  z.object({ what: z.literal('document'), paymentId: z.string(), ref: z.string() }),
  z.object({
    what: z.literal('attempt'),
    paymentId: z.string().nullable(),
    orderId: z.string(),
    ref: z.string(),
  }),
]);
type RecordRow = z.infer<typeof recordRow>;

const recordedRow = z.object({
  id: z.string(),
  paymentId: z.string(),
  kind: z.enum(EFFECT_KINDS),
  payflowId: z.string(),
  firstSeen: z.boolean(),
}) satisfies z.ZodType<RecordedSighting>;

const storedRow = z.object({
  id: z.string(),
  orderId: z.string(),
  paymentId: z.string(),
  kind: z.enum(EFFECT_KINDS),
  payflowId: z.string(),
  dueDate: z.string().nullable(),
  grossMinor: minorText.nullable(),
  currency: z
    .string()
    .transform((code) => code.trim())
    .nullable(),
  providerStatus: z.string().nullable(),
  fileName: z.string().nullable(),
  firstSeenAt: timestampField,
  firstSeenBy: z.enum(SIGHTING_SOURCES),
  lastSeenAt: timestampField,
});

/** A recorded effect, as the operator's reads show it. */
export type StoredUnexplainedEffect = z.infer<typeof storedRow>;

const personalDataRow = z.object({
  id: z.string(),
  kind: z.string(),
  payflowId: z.string(),
  fileName: z.string().nullable(),
});

/** The personal data an unexplained effect's row holds (privacy export and erasure). */
export type EffectPersonalData = z.infer<typeof personalDataRow>;

/** installments: every installment of the payments, with or without Payflow's id. */
function installmentsPart(payments: string): string {
  return `
  SELECT 'installment' AS what, payment_id::text AS "paymentId", NULL::text AS "orderId",
         payflow_installment_id AS ref, removed_at IS NOT NULL AS removed,
         to_char(due_date, 'YYYY-MM-DD') AS date, gross_minor::text AS gross
    FROM installments WHERE payment_id = ANY(${payments}::uuid[])`;
}

/** documents: the Payflow ids of the payments' documents (removed ones too). */
function documentsPart(payments: string): string {
  return `
  SELECT 'document', payment_id::text, NULL, payflow_document_id, NULL, NULL, NULL
    FROM documents WHERE payment_id = ANY(${payments}::uuid[]) AND payflow_document_id IS NOT NULL`;
}

/**
 * command_attempts: the commands of the orders' attempts that are not finished, read by the
 * order's index (command_attempts_order_idx); one without a payment counts for each of them.
 */
function liveAttemptsPart(orders: string, payments: string): string {
  return `
  SELECT 'attempt', payment_id::text, order_id, command, NULL, NULL, NULL
    FROM command_attempts
   WHERE order_id = ANY(${orders}::text[]) AND state IN ('started', 'in_doubt')
     AND (payment_id = ANY(${payments}::uuid[]) OR payment_id IS NULL)`;
}

/** BridgeRecords while the rows are read into it. */
interface RecordsBeingRead extends BridgeRecords {
  readonly installmentIds: Set<string>;
  readonly unboundInstallments: UnboundInstallment[];
  readonly documentIds: Set<string>;
  readonly liveCommands: Set<string>;
}

function emptyRecords(): RecordsBeingRead {
  return {
    installmentIds: new Set(),
    unboundInstallments: [],
    documentIds: new Set(),
    liveCommands: new Set(),
  };
}

@Injectable()
export class UnexplainedEffectRepository {
  /** What the bridge has recorded of each payment (one statement, whatever their number). */
  async recordsOf(
    sql: Sql,
    payments: readonly CheckedPayment[],
  ): Promise<Map<string, BridgeRecords>> {
    const { text, params } = render((bind) => {
      const ids = bind(payments.map((payment) => payment.id));
      const orders = bind([...new Set(payments.map((payment) => payment.orderId))]);
      return [installmentsPart(ids), documentsPart(ids), liveAttemptsPart(orders, ids)].join(
        '\n  UNION ALL',
      );
    });
    const rows = await queryRows(sql, recordRow, text, params);
    const records = new Map(payments.map((payment) => [payment.id, emptyRecords()]));
    for (const row of rows) addRecord(records, payments, row);
    return records;
  }

  /**
   * Records each sighting once per (payment, kind, Payflow id); a sighting recorded before
   * only moves `last_seen_at` (and what Payflow shows of it now). One statement. `firstSeen`
   * is `xmax = 0`: Postgres leaves xmax 0 on a row the statement inserted and sets it on one
   * its ON CONFLICT updated, so of two reads racing for one effect exactly one is first.
   */
  async record(
    sql: Sql,
    sightings: readonly Sighting[],
    source: SightingSource,
  ): Promise<RecordedSighting[]> {
    if (sightings.length === 0) return [];
    const column = <T>(pick: (sighting: Sighting) => T): T[] => sightings.map(pick);
    const installment = (sighting: Sighting) =>
      sighting.effect.kind === 'installment' ? sighting.effect : null;
    const document = (sighting: Sighting) =>
      sighting.effect.kind === 'document' ? sighting.effect : null;
    return queryRows(
      sql,
      recordedRow,
      `INSERT INTO unexplained_effects AS u (order_id, payment_id, kind, payflow_id, due_date,
                                             gross_minor, currency, provider_status, file_name,
                                             first_seen_by)
       SELECT x.order_id, x.payment_id, x.kind, x.payflow_id, x.due_date, x.gross_minor,
              x.currency, x.provider_status, x.file_name, $10
         FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::date[], $6::bigint[],
                     $7::text[], $8::text[], $9::text[])
              AS x (order_id, payment_id, kind, payflow_id, due_date, gross_minor, currency,
                    provider_status, file_name)
       ON CONFLICT (payment_id, kind, payflow_id) DO UPDATE
          SET last_seen_at = now(),
              due_date = COALESCE(EXCLUDED.due_date, u.due_date),
              gross_minor = COALESCE(EXCLUDED.gross_minor, u.gross_minor),
              currency = COALESCE(EXCLUDED.currency, u.currency),
              provider_status = COALESCE(EXCLUDED.provider_status, u.provider_status),
              file_name = COALESCE(EXCLUDED.file_name, u.file_name)
       RETURNING id::text AS id, payment_id::text AS "paymentId", kind,
                 payflow_id AS "payflowId", (xmax = 0) AS "firstSeen"`,
      [
        column((sighting) => sighting.payment.orderId),
        column((sighting) => sighting.payment.id),
        column((sighting) => sighting.effect.kind),
        column((sighting) => sighting.effect.payflowId),
        column((sighting) => installment(sighting)?.date ?? null),
        column((sighting) => installment(sighting)?.grossMinor.toString() ?? null),
        column((sighting) => installment(sighting)?.currency ?? null),
        column((sighting) => installment(sighting)?.status ?? null),
        column((sighting) => document(sighting)?.fileName ?? null),
        source,
      ],
    );
  }

  /** The order's recorded effects, oldest first (by the order's index). */
  listForOrder(sql: Sql, orderId: string): Promise<StoredUnexplainedEffect[]> {
    return queryRows(
      sql,
      storedRow,
      `SELECT id::text, order_id AS "orderId", payment_id::text AS "paymentId", kind,
              payflow_id AS "payflowId", to_char(due_date, 'YYYY-MM-DD') AS "dueDate",
              gross_minor::text AS "grossMinor", currency, provider_status AS "providerStatus",
              file_name AS "fileName", first_seen_at AS "firstSeenAt",
              first_seen_by AS "firstSeenBy", last_seen_at AS "lastSeenAt"
         FROM unexplained_effects WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
  }

  /** The order's unexplained effects, in id order (privacy export and erasure). */
  personalDataOf(sql: Sql, orderId: string): Promise<EffectPersonalData[]> {
    return queryRows(
      sql,
      personalDataRow,
      `SELECT id::text AS id, kind, payflow_id AS "payflowId", file_name AS "fileName"
         FROM unexplained_effects WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
  }

  /**
   * Replaces the file names of the order's unexplained effects with `erased` (the privacy
   * marker); the number replaced (0 once they all hold it).
   */
  eraseFileNames(tx: Sql, orderId: string, erased: string): Promise<number> {
    return tx.execute(
      `UPDATE unexplained_effects SET file_name = $2
        WHERE order_id = $1 AND file_name IS NOT NULL AND file_name <> $2`,
      [orderId, erased],
    );
  }
}

function addRecord(
  records: Map<string, RecordsBeingRead>,
  payments: readonly CheckedPayment[],
  row: RecordRow,
): void {
  switch (row.what) {
    case 'installment': {
      const of = records.get(row.paymentId);
      if (of === undefined) return;
      if (row.ref !== null) of.installmentIds.add(row.ref);
      else if (!row.removed) of.unboundInstallments.push({ date: row.date, grossMinor: row.gross });
      return;
    }
    case 'document':
      records.get(row.paymentId)?.documentIds.add(row.ref);
      return;
    case 'attempt':
      for (const payment of payments) {
        const about =
          row.paymentId === null ? payment.orderId === row.orderId : payment.id === row.paymentId;
        if (about) records.get(payment.id)?.liveCommands.add(row.ref);
      }
      return;
  }
}
