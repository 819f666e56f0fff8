/** The ERP's installment references, mapped to Payflow's installment ids in Postgres. */
import type { Sql } from '../../database/database.js';
import type { InstallmentRepository } from '../../payments/installment.repository.js';
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
  installments: InstallmentRepository,
  sql: Sql,
  paymentId: string,
  ref: string,
): Promise<KnownInstallment> {
  const row = await installments.findLive(sql, paymentId, ref);
  if (row === null || row.payflowId === null) {
    throw mappingFailed(
      'ORDER.UNKNOWN_INSTALLMENT_REF',
      `installment reference "${ref}" is not a live installment of the order's payment`,
    );
  }
  return { ...row, payflowId: row.payflowId };
}
