/** The only owner of the `refunds` table's SQL: refunds made at Payflow, by ERP reference. */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { minorUnitsField, timestampField } from '../database/row-schemas.js';

export interface MadeRefund {
  readonly paymentId: string;
  readonly refundRef: string;
  readonly payflowRefundId: string;
  readonly currency: string;
  readonly grossMinor: number;
  readonly netMinor: number;
  readonly refundType: string;
  readonly remainingMinor: number | null;
}

const refundGrossRow = z.object({ paymentId: z.string(), grossMinor: minorUnitsField });

const overviewRow = z.object({
  paymentId: z.string(),
  refundRef: z.string(),
  payflowRefundId: z.string().nullable(),
  refundType: z.string().nullable(),
  currency: z.string(),
  /** Minor units as decimal text. */
  gross: z.string(),
  net: z.string(),
  remaining: z.string().nullable(),
  createdAt: timestampField,
});

/** A refund as the operator's reads show it. */
export type RefundOverview = z.infer<typeof overviewRow>;

@Injectable()
export class RefundRepository {
  /** Every refund of the payments, oldest first. */
  listForPayments(sql: Sql, paymentIds: readonly string[]): Promise<RefundOverview[]> {
    return queryRows(
      sql,
      overviewRow,
      `SELECT payment_id::text AS "paymentId", refund_ref AS "refundRef",
              payflow_refund_id AS "payflowRefundId", refund_type AS "refundType", currency,
              gross_minor::text AS gross, net_minor::text AS net,
              remaining_minor::text AS remaining, created_at AS "createdAt"
         FROM refunds WHERE payment_id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [paymentIds],
    );
  }

  async insert(tx: Sql, refund: MadeRefund): Promise<void> {
    await tx.execute(
      `INSERT INTO refunds (payment_id, refund_ref, payflow_refund_id, currency, gross_minor,
                            net_minor, refund_type, remaining_minor)
       VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (payment_id, refund_ref) DO NOTHING`,
      [
        refund.paymentId,
        refund.refundRef,
        refund.payflowRefundId,
        refund.currency,
        refund.grossMinor,
        refund.netMinor,
        refund.refundType,
        refund.remainingMinor,
      ],
    );
  }

  /** The gross of every refund of these payments (settlement reconciliation). */
  settlementRefunds(
    sql: Sql,
    paymentIds: readonly string[],
  ): Promise<{ paymentId: string; grossMinor: number }[]> {
    return queryRows(
      sql,
      refundGrossRow,
      `SELECT payment_id::text AS "paymentId", gross_minor::text AS "grossMinor"
         FROM refunds WHERE payment_id = ANY($1::uuid[])`,
      [paymentIds],
    );
  }
}
