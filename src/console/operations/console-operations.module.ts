/**
 * The console's operations pages (issue 22): dead letters (list, message, replay with its
 * progress), calls in doubt (the two verdicts), settlement nights (pull again, forget) and
 * the overview. One rule, two doors: the actions call the services the CLI's `dlq replay`,
 * `in-doubt resolve`, `settlements pull` and `settlements forget` call, built by the same
 * feature modules; the pages read through src/operator. ConsoleModule imports this module
 * when the console is on; every page is a `@ConsolePage()` (management port, session,
 * CSRF on every POST) and every action is recorded by ConsoleAudit.
 *
 * The replays publish through the application's outbox relay, found by ModuleRef when a
 * replay first flushes (the relay belongs to the worker's OutboxModule, which this module
 * does not import: importing it again would start a second relay).
 */
import { Module } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  DEAD_LETTER_REPLAY_FLUSHER,
  DeadLetterReplayModule,
} from '../../dead-letters/replay/dead-letter-replay.module.js';
import { DeadLetterReplayService } from '../../dead-letters/replay/dead-letter-replay.service.js';
import { OperatorReadsModule } from '../../operator/operator-reads.module.js';
import { DeadLetterListQuery } from '../../operator/dead-letters/dead-letter-list.query.js';
import { OverviewSampler } from '../../operator/overview/overview-sampler.js';
import { OverviewQuery } from '../../operator/overview/overview.query.js';
import { SettlementNightsQuery } from '../../operator/settlements/settlement-nights.query.js';
import { IN_DOUBT_ORDER_REPLAYER, InDoubtModule } from '../../orders/in-doubt/in-doubt.module.js';
import type { OrderReplayer } from '../../orders/in-doubt/in-doubt.service.js';
import { OutboxRelay } from '../../outbox/outbox.relay.js';
import type { OutboxFlusher } from '../../outbox/relay.options.js';
import { SettlementPullModule } from '../../settlements/pull/settlement-pull.module.js';
import { RELAY_WAKEUP } from './console-operations.tokens.js';
import { ConsoleReplays } from './dead-letters/console-replays.js';
import { DeadLettersController } from './dead-letters/dead-letters.controller.js';
import { ConsoleVerdicts } from './in-doubt/console-verdicts.js';
import { InDoubtController } from './in-doubt/in-doubt.controller.js';
import { OverviewController } from './overview/overview.controller.js';
import { ConsoleNightActions } from './settlements/console-night-actions.js';
import { SettlementsController } from './settlements/settlements.controller.js';

/** The application's outbox relay (a replay publishes with it, a pull wakes it). */
function relayOf(modules: ModuleRef): OutboxRelay {
  return modules.get(OutboxRelay, { strict: false });
}

@Module({
  providers: [
    {
      provide: DEAD_LETTER_REPLAY_FLUSHER,
      inject: [ModuleRef],
      useFactory: (modules: ModuleRef): OutboxFlusher => ({
        flush: (timeoutMs, options) => relayOf(modules).flush(timeoutMs, options),
      }),
    },
    {
      provide: RELAY_WAKEUP,
      inject: [ModuleRef],
      useFactory: (modules: ModuleRef) => (): void => {
        try {
          relayOf(modules).notify();
        } catch {
          // No relay in this application: the workers' relays poll the outbox.
        }
      },
    },
  ],
  exports: [DEAD_LETTER_REPLAY_FLUSHER, RELAY_WAKEUP],
})
class ConsoleOutboxModule {}

const REPLAY = DeadLetterReplayModule.forRoot({ imports: [ConsoleOutboxModule] });

/** After a verdict, the order's parked events are republished as `dlq replay --order` does. */
@Module({
  imports: [REPLAY],
  providers: [
    {
      provide: IN_DOUBT_ORDER_REPLAYER,
      inject: [DeadLetterReplayService],
      useFactory: (replay: DeadLetterReplayService): OrderReplayer => ({
        replayOrder: async (orderId) => {
          const result = await replay.replay({ orderId });
          return { messages: result.messages, byReason: result.byReason };
        },
      }),
    },
  ],
  exports: [IN_DOUBT_ORDER_REPLAYER],
})
class ConsoleOrderReplayerModule {}

@Module({
  imports: [
    ConsoleOutboxModule,
    REPLAY,
    OperatorReadsModule,
    InDoubtModule.forRoot({ imports: [OperatorReadsModule, ConsoleOrderReplayerModule] }),
    SettlementPullModule,
  ],
  controllers: [
    OverviewController,
    DeadLettersController,
    InDoubtController,
    SettlementsController,
  ],
  providers: [
    DeadLetterListQuery,
    SettlementNightsQuery,
    OverviewSampler,
    OverviewQuery,
    ConsoleReplays,
    ConsoleVerdicts,
    ConsoleNightActions,
  ],
})
export class ConsoleOperationsModule {}
