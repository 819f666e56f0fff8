/**
 * The one owner of `privacy_erasures`' SQL: the record of each erasure that changed
 * something, and the latest one that covered an order (what a second erase reports).
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';

/** Who or what erased: a person (`privacy erase`) or the daily retention job. */
export type ErasureTrigger = 'operator' | 'retention';
/** What an erasure covered. */
export type ErasureScope = 'order' | 'customer_number' | 'retention';

export interface NewErasure {
  readonly erasedBy: string;
  readonly trigger: ErasureTrigger;
  readonly scope: ErasureScope;
  /** The order id, `sha256:<hex>` of the customer number, or the retention's cut-off. */
  readonly subject: string;
  readonly orderIds: readonly string[];
  readonly counts: Readonly<Record<string, number>>;
  readonly changed: number;
}

const erasureRow = z.object({
  id: z.string(),
  erasedBy: z.string(),
  trigger: z.string(),
  scope: z.string(),
  erasedAt: timestampField,
  changed: z.number().int(),
});

/** An erasure as a later erase reports it. */
export type ErasureRecord = z.infer<typeof erasureRow>;

const COLUMNS = `id::text AS id, erased_by AS "erasedBy", trigger, scope, erased_at AS "erasedAt",
  changed`;

@Injectable()
export class PrivacyErasureRepository {
  async insert(tx: Sql, erasure: NewErasure): Promise<ErasureRecord> {
    const [row] = await queryRows(
      tx,
      erasureRow,
      `INSERT INTO privacy_erasures (erased_by, trigger, scope, subject, order_ids, counts, changed)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7)
       RETURNING ${COLUMNS}`,
      [
        erasure.erasedBy,
        erasure.trigger,
        erasure.scope,
        erasure.subject,
        JSON.stringify(erasure.orderIds),
        JSON.stringify(erasure.counts),
        erasure.changed,
      ],
    );
    if (row === undefined) throw new Error('privacy_erasures: the insert returned no row');
    return row;
  }

  /** The latest erasure of this scope and subject, or that covered one of `orderIds`. */
  async latest(
    sql: Sql,
    scope: ErasureScope,
    subject: string,
    orderIds: readonly string[],
  ): Promise<ErasureRecord | null> {
    const [row] = await queryRows(
      sql,
      erasureRow,
      `SELECT ${COLUMNS} FROM privacy_erasures
        WHERE (scope = $1 AND subject = $2) OR order_ids ?| $3::text[]
        ORDER BY id DESC LIMIT 1`,
      [scope, subject, orderIds],
    );
    return row ?? null;
  }
}
