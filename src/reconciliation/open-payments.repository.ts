/**
 * The one read reconciliation makes: the payments still open at Payflow, page by page, as
 * PaymentRepository (the owner of the `payments` table's SQL) reads them.
 */
import type { Sql } from '../database/database.js';
import { PaymentRepository, type OpenPayment } from '../payments/payment.repository.js';

export class OpenPaymentsRepository {
  constructor(private readonly payments = new PaymentRepository()) {}

  /**
   * Up to `limit` payments after id `after` (in id order) that have a Payflow id, are
   * created or cancelled, and whose provider status is not one of `finalStatuses`.
   */
  page(
    sql: Sql,
    finalStatuses: readonly string[],
    after: string,
    limit: number,
  ): Promise<OpenPayment[]> {
    return this.payments.openPage(sql, finalStatuses, after, limit);
  }
}
