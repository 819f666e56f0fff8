/** The only owner of the `payment_status_history` table's SQL: every status change, by source. */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';
import type { Part } from '../database/statement.js';

export interface StatusHistoryRow {
  readonly paymentId: string;
  readonly providerStatus: string;
  readonly previousProviderStatus: string | null;
  readonly status: string;
  /** `command` (with the event that made it), `webhook` or `poll`. */
  readonly source: string;
  readonly eventId?: string;
}

const paidRow = z.object({
  paymentId: z.string(),
  paidAt: timestampField,
  paidElsewhere: z.boolean(),
});

const recordedRow = z.object({
  paymentId: z.string(),
  recordedAt: timestampField,
  source: z.string(),
  previousProviderStatus: z.string().nullable(),
  providerStatus: z.string().nullable(),
  status: z.string().nullable(),
});

/** A recorded status change, as the operator's reads show it. */
export type RecordedStatusChange = z.infer<typeof recordedRow>;

@Injectable()
export class PaymentStatusHistoryRepository {
  /** The change as a statement part (with the payment's own update). */
  record(row: StatusHistoryRow): Part {
    return (bind) => `
    INSERT INTO payment_status_history
           (payment_id, provider_status, previous_provider_status, status, source, event_id)
    VALUES (${bind(row.paymentId)}::uuid, ${bind(row.providerStatus)},
            ${bind(row.previousProviderStatus)}, ${bind(row.status)}, ${bind(row.source)},
            ${bind(row.eventId ?? null)}::uuid)`;
  }

  /** Every recorded change of the payments, in the order they were recorded. */
  listForPayments(sql: Sql, paymentIds: readonly string[]): Promise<RecordedStatusChange[]> {
    return queryRows(
      sql,
      recordedRow,
      `SELECT payment_id::text AS "paymentId", recorded_at AS "recordedAt", source,
              previous_provider_status AS "previousProviderStatus",
              provider_status AS "providerStatus", status
         FROM payment_status_history WHERE payment_id = ANY($1::uuid[]) ORDER BY id`,
      [paymentIds],
    );
  }

  async insert(tx: Sql, row: StatusHistoryRow): Promise<void> {
    await tx.execute(
      `INSERT INTO payment_status_history
              (payment_id, provider_status, previous_provider_status, status, source)
       VALUES ($1::uuid, $2, $3, $4, $5)`,
      [row.paymentId, row.providerStatus, row.previousProviderStatus, row.status, row.source],
    );
  }

  /**
   * When each of these payments was first seen paid, and whether a command made it paid: a
   * manual-paid (order.marked_paid) is the one command Payflow answers with a paid status,
   * so such a payment was paid elsewhere (settlement reconciliation).
   */
  paidFacts(
    sql: Sql,
    paymentIds: readonly string[],
  ): Promise<{ paymentId: string; paidAt: Date; paidElsewhere: boolean }[]> {
    return queryRows(
      sql,
      paidRow,
      `SELECT payment_id::text AS "paymentId", min(recorded_at) AS "paidAt",
              bool_or(source = 'command') AS "paidElsewhere"
         FROM payment_status_history
        WHERE payment_id = ANY($1::uuid[]) AND status = 'paid'
        GROUP BY payment_id`,
      [paymentIds],
    );
  }
}
