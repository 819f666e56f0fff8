/** The only owner of the `payment_status_history` table's SQL: every status change, by source. */
import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/database.js';
import type { Part } from './statement.js';

export interface StatusHistoryRow {
  readonly paymentId: string;
  readonly providerStatus: string;
  readonly previousProviderStatus: string | null;
  readonly status: string;
  /** `command` (with the event that made it), `webhook` or `poll`. */
  readonly source: string;
  readonly eventId?: string;
}

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

  async insert(tx: Sql, row: StatusHistoryRow): Promise<void> {
    await tx.execute(
      `INSERT INTO payment_status_history
              (payment_id, provider_status, previous_provider_status, status, source)
       VALUES ($1::uuid, $2, $3, $4, $5)`,
      [row.paymentId, row.providerStatus, row.previousProviderStatus, row.status, row.source],
    );
  }
}
