/**
 * The console's operations pages (issue 22): dead letters (list, message, replay with its
 * progress), calls in doubt (the two verdicts), settlement nights (pull again, forget), the
 * reconciliation (acknowledge a finding) and the overview. One rule, two doors: the actions
 * call the services the CLI's `dlq replay`, `in-doubt resolve`, `dlq discard`, `settlements
 * pull`, `settlements forget` and `settlements acknowledge` call, built by the same feature
 * modules; the pages read through src/operator. ConsoleModule imports this module
 * when the console is on; every page is a `@ConsolePage()` (management port, session,
 * CSRF on every POST) and every action is recorded by ConsoleAudit.
 *
 * The replays publish through the application's outbox relay: the application passes its
 * own OutboxModule (the very module object it imports, so Nest builds it once and no second
 * relay starts), and the relay is injected from it like any other dependency.
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import {
  DEAD_LETTER_REPLAY_FLUSHER,
  DeadLetterReplayModule,
} from '../../dead-letters/replay/dead-letter-replay.module.js';
import { DeadLetterDiscardModule } from '../../dead-letters/discard/dead-letter-discard.module.js';
import { DeadLetterReplayService } from '../../dead-letters/replay/dead-letter-replay.service.js';
import { OperatorReadsModule } from '../../operator/operator-reads.module.js';
import { DeadLetterListQuery } from '../../operator/dead-letters/dead-letter-list.query.js';
import { OverviewSampler } from '../../operator/overview/overview-sampler.js';
import { OverviewQuery } from '../../operator/overview/overview.query.js';
import { ReconciliationQuery } from '../../operator/reconciliation/reconciliation.query.js';
import { SettlementNightsQuery } from '../../operator/settlements/settlement-nights.query.js';
import { IN_DOUBT_ORDER_REPLAYER, InDoubtModule } from '../../orders/in-doubt/in-doubt.module.js';
import type { OrderReplayer } from '../../orders/in-doubt/in-doubt.service.js';
import { OutboxRelay } from '../../outbox/outbox.relay.js';
import { SettlementPullModule } from '../../settlements/pull/settlement-pull.module.js';
import { SettlementReconcileModule } from '../../settlements/reconcile/settlement-reconcile.module.js';
import { ConsoleDiscards } from './dead-letters/console-discards.js';
import { ConsoleReplays } from './dead-letters/console-replays.js';
import { DeadLettersController } from './dead-letters/dead-letters.controller.js';
import { ConsoleVerdicts } from './in-doubt/console-verdicts.js';
import { InDoubtController } from './in-doubt/in-doubt.controller.js';
import { OverviewController } from './overview/overview.controller.js';
import { ConsoleAcknowledgements } from './reconciliation/console-acknowledgements.js';
import { ReconciliationController } from './reconciliation/reconciliation.controller.js';
import { ConsoleNightActions } from './settlements/console-night-actions.js';
import { SettlementsController } from './settlements/settlements.controller.js';

/** A module the application imports, passed on as it is (Nest builds one instance of it). */
export type ImportedModule = NonNullable<ModuleMetadata['imports']>[number];

/**
 * The application's outbox relay as the replays' flusher (it is an OutboxFlusher). The
 * pulls wake it themselves: SettlementPullModule is given the same outbox.
 */
@Module({})
class ConsoleOutboxModule {
  static forRoot(outbox: ImportedModule): DynamicModule {
    return {
      module: ConsoleOutboxModule,
      imports: [outbox],
      providers: [{ provide: DEAD_LETTER_REPLAY_FLUSHER, useExisting: OutboxRelay }],
      exports: [DEAD_LETTER_REPLAY_FLUSHER],
    };
  }
}

/** After a verdict, the order's parked events are republished as `dlq replay --order` does. */
@Module({})
class ConsoleOrderReplayerModule {
  static forRoot(replay: DynamicModule): DynamicModule {
    return {
      module: ConsoleOrderReplayerModule,
      imports: [replay],
      providers: [
        {
          provide: IN_DOUBT_ORDER_REPLAYER,
          inject: [DeadLetterReplayService],
          useFactory: (service: DeadLetterReplayService): OrderReplayer => ({
            replayOrder: async (orderId) => {
              const result = await service.replay({ orderId });
              return { messages: result.messages, byReason: result.byReason };
            },
          }),
        },
      ],
      exports: [IN_DOUBT_ORDER_REPLAYER],
    };
  }
}

@Module({})
export class ConsoleOperationsModule {
  /** `outbox`: the application's OutboxModule, whose relay publishes the replays. */
  static forRoot(outbox: ImportedModule): DynamicModule {
    const relay = ConsoleOutboxModule.forRoot(outbox);
    const replay = DeadLetterReplayModule.forRoot({ imports: [relay] });
    return {
      module: ConsoleOperationsModule,
      imports: [
        relay,
        replay,
        // A discard republishes the parked events as a replay does, through the same relay.
        DeadLetterDiscardModule.forRoot({ imports: [relay] }),
        OperatorReadsModule,
        InDoubtModule.forRoot({
          imports: [OperatorReadsModule, ConsoleOrderReplayerModule.forRoot(replay)],
        }),
        SettlementPullModule.forRoot({ outbox }),
        // The acknowledgement's SettlementReconciler (`settlements acknowledge`).
        SettlementReconcileModule,
      ],
      controllers: [
        OverviewController,
        DeadLettersController,
        InDoubtController,
        SettlementsController,
        ReconciliationController,
      ],
      providers: [
        DeadLetterListQuery,
        SettlementNightsQuery,
        OverviewSampler,
        OverviewQuery,
        ConsoleReplays,
        ConsoleDiscards,
        ConsoleVerdicts,
        ConsoleNightActions,
        ReconciliationQuery,
        ConsoleAcknowledgements,
      ],
    };
  }
}
