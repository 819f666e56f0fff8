/**
 * Every migration, oldest first. Listed explicitly rather than found by a glob so that the
 * same list works from tsc output, under jest, and in the TypeORM CLI.
 */
import { InitialSchema1763773200000 } from './1763773200000-InitialSchema.js';
import { OrderPipeline1763780400000 } from './1763780400000-OrderPipeline.js';
import { WebhookInbox1763787600000 } from './1763787600000-WebhookInbox.js';
import { Settlements1763794800000 } from './1763794800000-Settlements.js';
import { CommandAttemptSentAt1763866800000 } from './1763866800000-CommandAttemptSentAt.js';
import { OutboxLanes1763960400000 } from './1763960400000-OutboxLanes.js';
import { InDoubtVerdicts1764046800000 } from './1764046800000-InDoubtVerdicts.js';
import { PaymentTraceHeaders1764050400000 } from './1764050400000-PaymentTraceHeaders.js';
import { AttemptProbe1764054000000 } from './1764054000000-AttemptProbe.js';
import { ConsoleSearch1764057600000 } from './1764057600000-ConsoleSearch.js';
import { OperatorActions1764061200000 } from './1764061200000-OperatorActions.js';
import { UnexplainedEffects1764100000000 } from './1764100000000-UnexplainedEffects.js';
import { LateEffectWindow1764103600000 } from './1764103600000-LateEffectWindow.js';
import { DeadLetterDiscard1764107200000 } from './1764107200000-DeadLetterDiscard.js';
import { PrivacyErasures1764110800000 } from './1764110800000-PrivacyErasures.js';
import { ConsoleIdentity1764118800000 } from './1764118800000-ConsoleIdentity.js';
import { PaymentReferences1764122400000 } from './1764122400000-PaymentReferences.js';
import { SettlementReconciliation1764126000000 } from './1764126000000-SettlementReconciliation.js';

export const MIGRATIONS = [
  InitialSchema1763773200000,
  OrderPipeline1763780400000,
  WebhookInbox1763787600000,
  Settlements1763794800000,
  CommandAttemptSentAt1763866800000,
  OutboxLanes1763960400000,
  InDoubtVerdicts1764046800000,
  PaymentTraceHeaders1764050400000,
  AttemptProbe1764054000000,
  ConsoleSearch1764057600000,
  OperatorActions1764061200000,
  UnexplainedEffects1764100000000,
  LateEffectWindow1764103600000,
  DeadLetterDiscard1764107200000,
  PrivacyErasures1764110800000,
  ConsoleIdentity1764118800000,
  PaymentReferences1764122400000,
  SettlementReconciliation1764126000000,
];
