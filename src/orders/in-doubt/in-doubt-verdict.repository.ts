/**
 * The only owner of the `in_doubt_verdicts` table's SQL: a person's verdicts on calls in
 * doubt, the order's history of them, and the mark that the order's parked events were
 * republished afterwards (so that a run cut short is finished by the next one).
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { queryRows } from '../../database/parsed-rows.js';
import { timestampField } from '../../database/row-schemas.js';

export const VERDICTS = ['payment_found', 'not_created'] as const;
export type VerdictKind = (typeof VERDICTS)[number];

export interface NewVerdict {
  readonly orderId: string;
  readonly eventId: string;
  readonly attemptId: string;
  readonly command: string;
  readonly verdict: VerdictKind;
  readonly payflowId: string | null;
  readonly paymentId: string | null;
  readonly decidedBy: string;
}

const verdictRow = z.object({
  id: z.string(),
  orderId: z.string(),
  eventId: z.string(),
  attemptId: z.string(),
  command: z.string(),
  verdict: z.enum(VERDICTS),
  payflowId: z.string().nullable(),
  paymentId: z.string().nullable(),
  decidedBy: z.string(),
  decidedAt: timestampField,
  replayedAt: timestampField.nullable(),
  replayedLetters: z.number().int().nullable(),
});

export type VerdictRow = z.infer<typeof verdictRow>;

const COLUMNS = `id::text AS id, order_id AS "orderId", event_id::text AS "eventId",
  attempt_id::text AS "attemptId", command, verdict, payflow_id AS "payflowId",
  payment_id::text AS "paymentId", decided_by AS "decidedBy", decided_at AS "decidedAt",
  replayed_at AS "replayedAt", replayed_letters AS "replayedLetters"`;

@Injectable()
export class InDoubtVerdictRepository {
  async record(tx: Sql, verdict: NewVerdict): Promise<VerdictRow> {
    const [row] = await tx.query(
      `INSERT INTO in_doubt_verdicts (order_id, event_id, attempt_id, command, verdict,
                                      payflow_id, payment_id, decided_by)
       VALUES ($1, $2::uuid, $3::bigint, $4, $5, $6, $7::uuid, $8)
       RETURNING ${COLUMNS}`,
      [
        verdict.orderId,
        verdict.eventId,
        verdict.attemptId,
        verdict.command,
        verdict.verdict,
        verdict.payflowId,
        verdict.paymentId,
        verdict.decidedBy,
      ],
    );
    if (row === undefined) throw new Error('the verdict was not recorded');
    return verdictRow.parse(row);
  }

  /** The order's verdicts, oldest first. */
  ofOrder(sql: Sql, orderId: string): Promise<VerdictRow[]> {
    return queryRows(
      sql,
      verdictRow,
      `SELECT ${COLUMNS} FROM in_doubt_verdicts WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
  }

  /** The order's parked events were republished after the verdict. */
  async markReplayed(sql: Sql, verdictId: string, letters: number): Promise<void> {
    await sql.execute(
      `UPDATE in_doubt_verdicts SET replayed_at = clock_timestamp(), replayed_letters = $2
        WHERE id = $1::bigint AND replayed_at IS NULL`,
      [verdictId, letters],
    );
  }
}
