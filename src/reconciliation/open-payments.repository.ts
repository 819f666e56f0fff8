/**
 * The one query reconciliation makes: the payments still open at Payflow, page by page.
 * It reads the `payments` table, whose writes belong to the payments feature; it lives
 * here, parsed into a typed row, until that table's repository offers the same page.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';

/** A payment with a Payflow id whose status is not final yet. */
export interface OpenPayment {
  readonly id: string;
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly payflowId: string;
  /** ISO 4217 code (the column is char(3), so trimmed). */
  readonly currency: string;
}

const openPaymentRow = z.object({
  id: z.string(),
  order_id: z.string(),
  organization_id: z.string().nullable(),
  payflow_id: z.string(),
  currency: z.string(),
});

@Injectable()
export class OpenPaymentsRepository {
  /**
   * Up to `limit` payments after id `after` (in id order) that have a Payflow id, are
   * created or cancelled, and whose provider status is not one of `finalStatuses`.
   */
  async page(
    sql: Sql,
    finalStatuses: readonly string[],
    after: string,
    limit: number,
  ): Promise<OpenPayment[]> {
    const rows = await sql.query(
      `SELECT id::text AS id, order_id, organization_id, payflow_id, currency
         FROM payments
        WHERE payflow_id IS NOT NULL AND state IN ('created', 'cancelled')
          AND (provider_status IS NULL OR provider_status <> ALL($1::text[]))
          AND id > $2::uuid
        ORDER BY id LIMIT $3`,
      [finalStatuses, after, limit],
    );
    return rows.map((row) => {
      const parsed = openPaymentRow.parse(row);
      return {
        id: parsed.id,
        orderId: parsed.order_id,
        organizationId: parsed.organization_id,
        payflowId: parsed.payflow_id,
        currency: parsed.currency.trim(),
      };
    });
  }
}
