/** The only owner of the `refunds` table's SQL: refunds made at Payflow, by ERP reference. */
import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/database.js';

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

@Injectable()
export class RefundRepository {
  /** Whether the payment has a refund with this reference. */
  async exists(sql: Sql, paymentId: string, refundRef: string): Promise<boolean> {
    const rows = await sql.query(
      `SELECT 1 AS one FROM refunds WHERE payment_id = $1::uuid AND refund_ref = $2`,
      [paymentId, refundRef],
    );
    return rows.length > 0;
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
}
