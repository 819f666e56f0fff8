/**
 * The only owner of the `operator_actions` table's SQL: the audit trail of what people did
 * in the operator console (who, when, what, which order, details without personal data).
 */
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { queryRows } from '../../database/parsed-rows.js';
import { timestampField } from '../../database/row-schemas.js';

export const OPERATOR_ACTIONS = [
  'replay',
  'verdict',
  'discard',
  'pull',
  'forget',
  'reveal_contact',
  'sign_in',
  'sign_out',
  /** A viewer (read only) tried to act: refused with 403, nothing changed. */
  'action_refused',
  /** The order's personal data erased (PrivacyEraseService): counts only, no value. */
  'erase_personal_data',
  /** A dead letter's page opened: which letter, never its payload. */
  'view_dead_letter',
  /** A settlement finding closed by a person (`settlements acknowledge`): which, and why. */
  'acknowledge_finding',
] as const;
export type OperatorActionKind = (typeof OPERATOR_ACTIONS)[number];

export const ACTION_OUTCOMES = ['done', 'refused', 'failed'] as const;
export type ActionOutcome = (typeof ACTION_OUTCOMES)[number];

/** Values of an action's details: plain, non-personal facts (ids, counts, reasons). */
export type ActionDetails = Readonly<Record<string, string | number | boolean | null>>;

export interface NewOperatorAction {
  readonly actor: string;
  /** The OpenID provider's subject; null for the token sign-in (or when nobody is known). */
  readonly actorSubject: string | null;
  /** Whether the provider vouched for the actor (false: a name typed at the token sign-in). */
  readonly actorVerified: boolean;
  readonly clientAddress: string | null;
  readonly action: OperatorActionKind;
  readonly orderId: string | null;
  readonly details: ActionDetails;
  readonly outcome: ActionOutcome;
}

const detailValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const actionRow = z.object({
  id: z.string(),
  actor: z.string(),
  actorSubject: z.string().nullable(),
  actorVerified: z.boolean(),
  clientAddress: z.string().nullable(),
  action: z.string(),
  orderId: z.string().nullable(),
  details: z.record(z.string(), detailValue),
  outcome: z.string(),
  performedAt: timestampField,
});

export type OperatorActionRow = z.infer<typeof actionRow>;

const COLUMNS = `id::text AS id, actor, actor_subject AS "actorSubject",
  actor_verified AS "actorVerified", client_address AS "clientAddress", action,
  order_id AS "orderId", details, outcome, performed_at AS "performedAt"`;

export class OperatorActionRepository {
  async record(sql: Sql, action: NewOperatorAction): Promise<OperatorActionRow> {
    const [row] = await queryRows(
      sql,
      actionRow,
      `INSERT INTO operator_actions (actor, actor_subject, actor_verified, client_address,
                                     action, order_id, details, outcome)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
       RETURNING ${COLUMNS}`,
      [
        action.actor,
        action.actorSubject,
        action.actorVerified,
        action.clientAddress,
        action.action,
        action.orderId,
        JSON.stringify(action.details),
        action.outcome,
      ],
    );
    if (row === undefined) throw new Error('the operator action was not recorded');
    return row;
  }

  /** The order's actions, oldest first. */
  ofOrder(sql: Sql, orderId: string): Promise<OperatorActionRow[]> {
    return queryRows(
      sql,
      actionRow,
      `SELECT ${COLUMNS} FROM operator_actions WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
  }
}
