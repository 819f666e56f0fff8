/**
 * How a command gets its services: the feature modules the worker uses (or could import:
 * the operator console will call the same services from inside the worker), composed by
 * Nest in a context of the command's own, over the CLI's connections.
 *
 * The context is built when the command runs, not when the CLI starts, so that --help, a
 * usage error or a command that fails its checks reaches neither Postgres, Kafka nor
 * Payflow; and only the features a command names are built, so that a command that reads
 * the database needs no Payflow (nor Kafka) variable. Closed when the command ends.
 *
 *   const context = await this.features.open([OperatorReadsModule]);
 *   const query = context.get(OrderShowQuery);
 */
import {
  Inject,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type INestApplicationContext,
  type ModuleMetadata,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { APP_LOGGER } from '../logging/logger.module.js';
import type { AppLogger } from '../logging/logger.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DataSourceProvidedModule } from '../database/data-source-provided.module.js';
import { DeadLetterDiscardModule } from '../dead-letters/discard/dead-letter-discard.module.js';
import { DeadLetterReplayModule } from '../dead-letters/replay/dead-letter-replay.module.js';
import { DeadLetterReplayService } from '../dead-letters/replay/dead-letter-replay.service.js';
import { DEAD_LETTER_REPLAY_FLUSHER } from '../dead-letters/replay/dead-letter-replay.module.js';
import { OperatorReadsModule } from '../operator/operator-reads.module.js';
import { IN_DOUBT_ORDER_REPLAYER, InDoubtModule } from '../orders/in-doubt/in-doubt.module.js';
import type { OrderReplayer } from '../orders/in-doubt/in-doubt.service.js';
import { OUTBOX_REPOSITORY_OPTIONS, outboxBucket } from '../outbox/outbox.repository.js';
import type { OutboxFlusher } from '../outbox/relay.options.js';
import { PayflowModule, payflowClientOptionsFromConfig } from '../payflow/payflow.module.js';
import { PrivacyModule } from '../privacy/privacy.module.js';
import { loadCliPayflowConfig, type CliConfig, type CliPayflowConfig } from './cli.config.js';
import { CLI_CONFIG, CliResources } from './cli.resources.js';

type FeatureImport = NonNullable<ModuleMetadata['imports']>[number];

/** How long `in-doubt resolve` waits for the order's republished events to leave. */
const REPLAY_FLUSH_TIMEOUT_MS = 30_000;

interface ConnectionsSettings {
  readonly config: CliConfig;
  readonly logger: AppLogger;
  readonly resources: CliResources;
}

/**
 * What the worker's modules find globally, from the CLI: its configuration (APP_CONFIG:
 * the part the feature modules read, the topics), its logger, and the database over the
 * CLI's one pool. No relay runs in the CLI: every transaction that writes to the outbox
 * NOTIFYs the workers' relays itself.
 */
@Module({})
class CliConnectionsModule {
  static forRoot(settings: ConnectionsSettings): DynamicModule {
    return {
      module: CliConnectionsModule,
      global: true,
      imports: [DataSourceProvidedModule.forRoot(() => settings.resources.dataSource())],
      providers: [
        { provide: CLI_CONFIG, useValue: settings.config },
        { provide: APP_CONFIG, useValue: settings.config },
        { provide: APP_LOGGER, useValue: settings.logger },
        { provide: CliResources, useValue: settings.resources },
        { provide: OUTBOX_REPOSITORY_OPTIONS, useValue: { notifyInTransaction: true } },
      ],
      exports: [CLI_CONFIG, APP_CONFIG, APP_LOGGER, CliResources, OUTBOX_REPOSITORY_OPTIONS],
    };
  }
}

/** The worker's Payflow client module, over the PAYFLOW_* variables checked for this command. */
function cliPayflowModule(config: CliPayflowConfig): DynamicModule {
  return PayflowModule.forRootAsync({
    isGlobal: true,
    inject: [APP_LOGGER],
    useFactory: (logger: AppLogger) => ({
      options: payflowClientOptionsFromConfig(config),
      logger,
    }),
  });
}

/**
 * The CLI's outbox flusher: the relay over its own producer, which connects to Kafka on the
 * first flush (a dry run never does).
 */
@Module({
  providers: [
    {
      provide: DEAD_LETTER_REPLAY_FLUSHER,
      inject: [CliResources],
      useFactory: (resources: CliResources): OutboxFlusher => ({
        flush: async (timeoutMs, options) =>
          (await resources.outboxRelay()).flush(timeoutMs, options),
      }),
    },
  ],
  exports: [DEAD_LETTER_REPLAY_FLUSHER],
})
class CliOutboxFlusherModule {}

/** `dlq replay`: the replay of dead letters, published by the CLI's relay. */
export const DLQ_REPLAY_FEATURE = DeadLetterReplayModule.forRoot({
  imports: [CliOutboxFlusherModule],
});

/** `dlq discard`: the discard of a dead letter, its parked events published by the CLI's relay. */
export const DLQ_DISCARD_FEATURE = DeadLetterDiscardModule.forRoot({
  imports: [CliOutboxFlusherModule],
});

/**
 * After a verdict, `in-doubt resolve` republishes the order's parked events as
 * `dlq replay --order` does, then waits for the order's bucket to be published (its
 * payment.created too). Kafka is reached first, so that an unreachable Kafka changes
 * nothing more than the verdict.
 */
@Module({
  imports: [DLQ_REPLAY_FEATURE],
  providers: [
    {
      provide: IN_DOUBT_ORDER_REPLAYER,
      inject: [CliResources, DeadLetterReplayService],
      useFactory: (resources: CliResources, replay: DeadLetterReplayService): OrderReplayer => ({
        replayOrder: async (orderId) => {
          const relay = await resources.outboxRelay();
          const result = await replay.replay({ orderId });
          const flushed = await relay.flush(REPLAY_FLUSH_TIMEOUT_MS, {
            buckets: [outboxBucket(orderId)],
          });
          if (!flushed.drained) {
            throw new Error(
              `the verdict is recorded but ${flushed.remaining} event(s) of order ${orderId} were not ` +
                "published in time (is Kafka reachable?); the worker's outbox relay publishes them",
            );
          }
          return { messages: result.messages, byReason: result.byReason };
        },
      }),
    },
  ],
  exports: [IN_DOUBT_ORDER_REPLAYER],
})
class CliOrderReplayerModule {}

/** `in-doubt resolve`: the verdict service, reading through the read side's query. */
export const IN_DOUBT_RESOLVE_FEATURE = InDoubtModule.forRoot({
  imports: [OperatorReadsModule, CliOrderReplayerModule],
});

/** `privacy export` and `privacy erase`: Postgres only (no retention job in the CLI). */
export const PRIVACY_FEATURE = PrivacyModule.forRoot();

export interface OpenOptions {
  /** The command calls Payflow: check the PAYFLOW_* variables first, then provide PAYFLOW_API. */
  readonly payflow?: boolean;
}

@Injectable()
export class CliFeatures implements BeforeApplicationShutdown {
  private readonly opened: INestApplicationContext[] = [];

  constructor(
    @Inject(CLI_CONFIG) private readonly config: CliConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    @Inject(CliResources) private readonly resources: CliResources,
  ) {}

  /**
   * Builds `features` over the CLI's connections. In the order the commands always checked
   * things: the Payflow variables (when asked for), then the database, then the services.
   */
  async open(
    features: readonly FeatureImport[],
    options: OpenOptions = {},
  ): Promise<INestApplicationContext> {
    const payflow = options.payflow === true ? loadCliPayflowConfig(this.config) : null;
    await this.resources.dataSource();
    const context = await NestFactory.createApplicationContext(
      {
        imports: [
          CliConnectionsModule.forRoot({
            config: this.config,
            logger: this.logger,
            resources: this.resources,
          }),
          ...(payflow === null ? [] : [cliPayflowModule(payflow)]),
          ...features,
        ],
      },
      // Errors reach the command (one line on stderr), never Nest's logger or process.abort.
      { logger: false, abortOnError: false },
    );
    this.opened.push(context);
    return context;
  }

  /** Closes what the commands opened (the Payflow client, the transaction batcher), before
   * CliResources closes the connections under them. */
  async beforeApplicationShutdown(): Promise<void> {
    const contexts = this.opened.splice(0).reverse();
    for (const context of contexts) await context.close();
  }
}
