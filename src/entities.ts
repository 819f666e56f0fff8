/**
 * Every table's entity, from the lists the feature modules register with
 * DatabaseModule.forFeature: for the data sources built outside the Nest application,
 * which must see them all (src/cli-data-source.ts for `migration:generate`, the CLI's).
 */
import { DEAD_LETTER_ENTITIES } from './dead-letters/dead-letters.module.js';
import { ORDER_ENTITIES } from './orders/orders.module.js';
import { OPERATOR_ACTION_ENTITIES } from './operator/audit/operator-action.entity.js';
import { OUTBOX_ENTITIES } from './outbox/outbox.module.js';
import { PAYMENT_ENTITIES } from './payments/payments-persistence.module.js';
import { PRIVACY_ENTITIES } from './privacy/privacy-erasure.entity.js';
import { UNEXPLAINED_EFFECT_ENTITIES } from './payments/unexplained-effects/unexplained-effect.entity.js';
import { SETTLEMENT_ENTITIES } from './settlements/settlements.module.js';
import { WEBHOOK_ENTITIES } from './webhooks/inbox/webhook-inbox.module.js';

export const ENTITIES = [
  ...ORDER_ENTITIES,
  ...PAYMENT_ENTITIES,
  ...OUTBOX_ENTITIES,
  ...DEAD_LETTER_ENTITIES,
  ...WEBHOOK_ENTITIES,
  ...SETTLEMENT_ENTITIES,
  ...OPERATOR_ACTION_ENTITIES,
  ...UNEXPLAINED_EFFECT_ENTITIES,
  ...PRIVACY_ENTITIES,
];
