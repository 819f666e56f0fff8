/** The ERP's installment references, mapped to Payflow's installment ids in Postgres. */
import type { Sql } from '../../database/database.js';
import { mappingFailed } from './order-amounts.js';

export interface KnownInstallment {
  /** installments.id */
  readonly id: string;
  readonly ref: string;
  readonly payflowId: string;
  readonly grossMinor: number;
  readonly date: string;
}

/** The live (not removed) installment `ref` of a payment; unknown → mapping_failed. */
export async function requireInstallment(
  tx: Sql,
  paymentId: string,
  ref: string,
): Promise<KnownInstallment> {
  const [row] = await tx.query<{
    id: string;
    payflow_installment_id: string | null;
    gross_minor: string;
    due_date: string;
  }>(
    `SELECT id, payflow_installment_id, gross_minor, to_char(due_date, 'YYYY-MM-DD') AS due_date
       FROM installments
      WHERE payment_id = $1::uuid AND installment_ref = $2 AND removed_at IS NULL`,
    [paymentId, ref],
  );
  if (row === undefined || row.payflow_installment_id === null) {
    throw mappingFailed(
      'ORDER.UNKNOWN_INSTALLMENT_REF',
      `installment reference "${ref}" is not a live installment of the order's payment`,
    );
  }
  return {
    id: row.id,
    ref,
    payflowId: row.payflow_installment_id,
    grossMinor: Number(row.gross_minor),
    date: row.due_date,
  };
}
