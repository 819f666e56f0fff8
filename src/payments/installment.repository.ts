/**
 * The only owner of the `installments` table's SQL: a payment's planned and Payflow's
 * installments. Rows come back parsed (zod); writes that share a round trip with the
 * payment's are statement parts (statement.ts).
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { minorUnitsField, timestampField } from '../database/row-schemas.js';
import { NEW_PAYMENTS } from './payment.repository.js';
import type { PaymentInstallment } from './payment.aggregate.js';
import type { Part } from '../database/statement.js';
import type { StoredInstallment } from './status-sync/status-changes.js';

/** One planned installment of a payment to create, by the payment's `n` in its statement. */
export interface PlannedInstallmentRow {
  readonly n: number;
  readonly ref: string;
  readonly position: number;
  /** YYYY-MM-DD */
  readonly date: string;
  readonly grossMinor: number;
}

/** Payflow's installment, bound to the planned one at `position` (1-based). */
export interface PayflowInstallmentRow {
  readonly paymentId: string;
  readonly position: number;
  readonly payflowId: string;
  readonly type: string;
  readonly status: string;
}

/** A payment's installment as its `payment.created` event shows it. */
export interface InstallmentView {
  readonly ref: string;
  readonly payflowId: string | null;
  readonly date: string;
  readonly grossMinor: number;
  readonly status: string | null;
}

export interface AddedInstallment {
  readonly paymentId: string;
  readonly ref: string;
  readonly payflowId: string;
  readonly date: string;
  readonly grossMinor: number;
  readonly type: string;
  readonly status: string;
}

const minor = z.union([z.string(), z.number()]).transform(Number);

const dueRow = z.object({
  paymentId: z.string(),
  payflowInstallmentId: z.string(),
  grossMinor: minorUnitsField,
});

const viewRow = z.object({
  ref: z.string(),
  payflowId: z.string().nullable(),
  date: z.string(),
  grossMinor: minor,
  status: z.string().nullable(),
}) satisfies z.ZodType<InstallmentView>;

const syncRow = z.object({
  id: z.string(),
  installmentRef: z.string().nullable(),
  payflowInstallmentId: z.string().nullable(),
  providerStatus: z.string().nullable(),
}) satisfies z.ZodType<StoredInstallment>;

const overviewRow = z.object({
  paymentId: z.string(),
  position: z.number(),
  installmentRef: z.string().nullable(),
  payflowInstallmentId: z.string().nullable(),
  type: z.string().nullable(),
  dueDate: z.string(),
  /** Minor units as decimal text. */
  gross: z.string(),
  providerStatus: z.string().nullable(),
  removedAt: timestampField.nullable(),
});

/** An installment (live or removed) as the operator's reads show it. */
export type InstallmentOverview = z.infer<typeof overviewRow>;

const aggregateRow = z.object({
  id: z.string(),
  ref: z.string().nullable(),
  payflowId: z.string().nullable(),
  date: z.string(),
  grossMinor: z
    .string()
    .regex(/^-?\d+$/)
    .transform(BigInt),
  removed: z.boolean(),
});

const liveCountRow = z.object({ paymentId: z.string(), live: z.number().int() });

@Injectable()
export class InstallmentRepository {
  /** CTE `new_installments`: the plans of the payments `new_payments` creates. */
  planCte(plan: readonly PlannedInstallmentRow[]): Part {
    return (bind) => `
  new_installments AS (
    INSERT INTO installments (payment_id, installment_ref, position, due_date, gross_minor)
    SELECT p.id, i.ref, i.position, i.due_date, i.gross_minor
      FROM unnest(${bind(plan.map((row) => row.n))}::int[],
                  ${bind(plan.map((row) => row.ref))}::text[],
                  ${bind(plan.map((row) => row.position))}::int[],
                  ${bind(plan.map((row) => row.date))}::date[],
                  ${bind(plan.map((row) => row.grossMinor))}::bigint[])
           AS i (n, ref, position, due_date, gross_minor)
      JOIN ${NEW_PAYMENTS} p ON p.n = i.n)`;
  }

  /** A retried creation plans its installments again. */
  async deleteForPayment(tx: Sql, paymentId: string): Promise<void> {
    await tx.execute(`DELETE FROM installments WHERE payment_id = $1::uuid`, [paymentId]);
  }

  /**
   * Payflow's ids, types and statuses bound to the planned installments by position;
   * `liveOnly` skips removed ones.
   */
  bindPayflowIds(rows: readonly PayflowInstallmentRow[], liveOnly: boolean): Part {
    return (bind) => `
    UPDATE installments i
       SET payflow_installment_id = x.payflow_id, type = x.type, provider_status = x.status,
           updated_at = now()
      FROM unnest(${bind(rows.map((row) => row.paymentId))}::uuid[],
                  ${bind(rows.map((row) => row.position))}::int[],
                  ${bind(rows.map((row) => row.payflowId))}::text[],
                  ${bind(rows.map((row) => row.type))}::text[],
                  ${bind(rows.map((row) => row.status))}::text[])
           AS x (payment_id, position, payflow_id, type, status)
     WHERE i.payment_id = x.payment_id AND i.position = x.position
       ${liveOnly ? 'AND i.removed_at IS NULL' : ''}`;
  }

  /** A payment's live installments in plan order. */
  liveViews(sql: Sql, paymentId: string): Promise<InstallmentView[]> {
    return queryRows(
      sql,
      viewRow,
      `SELECT installment_ref AS ref, payflow_installment_id AS "payflowId",
              to_char(due_date, 'YYYY-MM-DD') AS "date", gross_minor::text AS "grossMinor",
              provider_status AS status
         FROM installments WHERE payment_id = $1::uuid AND removed_at IS NULL ORDER BY position`,
      [paymentId],
    );
  }

  /** Every installment of a payment (removed ones too), as its aggregate holds them. */
  forAggregate(sql: Sql, paymentId: string): Promise<PaymentInstallment[]> {
    return queryRows(
      sql,
      aggregateRow,
      `SELECT id::text, installment_ref AS ref, payflow_installment_id AS "payflowId",
              to_char(due_date, 'YYYY-MM-DD') AS "date", gross_minor::text AS "grossMinor",
              removed_at IS NOT NULL AS removed
         FROM installments WHERE payment_id = $1::uuid ORDER BY position, created_at`,
      [paymentId],
    );
  }

  /** Payflow's new installment, after the payment's last one. */
  add(installment: AddedInstallment): Part {
    return (bind) => {
      const paymentId = bind(installment.paymentId);
      return `
    INSERT INTO installments (payment_id, installment_ref, payflow_installment_id, position,
                              due_date, gross_minor, type, provider_status)
    SELECT ${paymentId}::uuid, ${bind(installment.ref)}, ${bind(installment.payflowId)},
           COALESCE(MAX(position), 0) + 1, ${bind(installment.date)}::date,
           ${bind(installment.grossMinor)}::bigint, ${bind(installment.type)},
           ${bind(installment.status)}
      FROM installments WHERE payment_id = ${paymentId}::uuid`;
    };
  }

  change(id: string, date: string, grossMinor: number, status: string): Part {
    return (bind) => `
    UPDATE installments
       SET due_date = ${bind(date)}::date, gross_minor = ${bind(grossMinor)}::bigint,
           provider_status = ${bind(status)}, updated_at = now()
     WHERE id = ${bind(id)}::uuid`;
  }

  remove(id: string, status: string): Part {
    return (bind) => `
    UPDATE installments SET removed_at = now(), provider_status = ${bind(status)}, updated_at = now()
     WHERE id = ${bind(id)}::uuid`;
  }

  /** Statuses by Payflow installment id, within one payment. */
  setStatusesByPayflowId(
    paymentId: string,
    statuses: readonly { readonly payflowId: string; readonly status: string }[],
  ): Part {
    return (bind) => `
    UPDATE installments i SET provider_status = x.status, updated_at = now()
      FROM unnest(${bind(statuses.map((entry) => entry.payflowId))}::text[],
                  ${bind(statuses.map((entry) => entry.status))}::text[]) AS x (payflow_id, status)
     WHERE i.payment_id = ${bind(paymentId)}::uuid AND i.payflow_installment_id = x.payflow_id`;
  }

  /** Every installment of a payment, as the status sync compares them. */
  forSync(sql: Sql, paymentId: string): Promise<StoredInstallment[]> {
    return queryRows(
      sql,
      syncRow,
      `SELECT id::text, installment_ref AS "installmentRef",
              payflow_installment_id AS "payflowInstallmentId", provider_status AS "providerStatus"
         FROM installments WHERE payment_id = $1::uuid ORDER BY position, created_at`,
      [paymentId],
    );
  }

  /** Every installment of the payments, in plan order. */
  listForPayments(sql: Sql, paymentIds: readonly string[]): Promise<InstallmentOverview[]> {
    return queryRows(
      sql,
      overviewRow,
      `SELECT payment_id::text AS "paymentId", position, installment_ref AS "installmentRef",
              payflow_installment_id AS "payflowInstallmentId", type, due_date::text AS "dueDate",
              gross_minor::text AS gross, provider_status AS "providerStatus", removed_at AS "removedAt"
         FROM installments WHERE payment_id = ANY($1::uuid[]) ORDER BY position, created_at`,
      [paymentIds],
    );
  }

  /** How many live (not removed) installments each payment has; absent: none. */
  async liveCounts(sql: Sql, paymentIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await queryRows(
      sql,
      liveCountRow,
      `SELECT payment_id::text AS "paymentId", count(*)::int AS live
         FROM installments WHERE payment_id = ANY($1::uuid[]) AND removed_at IS NULL
        GROUP BY payment_id`,
      [paymentIds],
    );
    return new Map(rows.map((row) => [row.paymentId, row.live]));
  }

  /** Statuses by installments.id. */
  async setStatuses(
    tx: Sql,
    statuses: readonly { readonly id: string; readonly status: string }[],
  ): Promise<void> {
    await tx.execute(
      `UPDATE installments i SET provider_status = x.status, updated_at = now()
         FROM unnest($1::uuid[], $2::text[]) AS x (id, status)
        WHERE i.id = x.id`,
      [statuses.map((entry) => entry.id), statuses.map((entry) => entry.status)],
    );
  }

  /** Live installments with a Payflow id, of these payments (settlement reconciliation). */
  settlementDue(
    sql: Sql,
    paymentIds: readonly string[],
  ): Promise<{ paymentId: string; payflowInstallmentId: string; grossMinor: number }[]> {
    return queryRows(
      sql,
      dueRow,
      `SELECT payment_id::text AS "paymentId", payflow_installment_id AS "payflowInstallmentId",
              gross_minor::text AS "grossMinor"
         FROM installments
        WHERE payment_id = ANY($1::uuid[]) AND removed_at IS NULL
          AND payflow_installment_id IS NOT NULL`,
      [paymentIds],
    );
  }
}
