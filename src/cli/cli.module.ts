import { Module, type DynamicModule } from '@nestjs/common';
import { APP_LOGGER } from '../logging/logger.module.js';
import type { AppLogger } from '../logging/logger.js';
import type { CliConfig } from './cli.config.js';
import { CliFeatures } from './cli.features.js';
import {
  CLI_CONFIG,
  CLI_PRODUCER_FACTORY,
  CliResources,
  type CliProducerFactory,
} from './cli.resources.js';
import { CLI_RUNTIME, type CliRuntime } from './cli.runtime.js';
import { CliContext } from './commands/cli-command.js';
import { DlqDiscardCommand } from './commands/dlq-discard.command.js';
import { DlqCommand, DlqReplayCommand } from './commands/dlq.command.js';
import {
  InDoubtCommand,
  InDoubtListCommand,
  InDoubtResolveCommand,
} from './commands/in-doubt.command.js';
import { OrderCommand, OrderShowCommand } from './commands/order.command.js';
import {
  PrivacyCommand,
  PrivacyEraseCommand,
  PrivacyExportCommand,
} from './commands/privacy.command.js';
import { ReconcileCommand } from './commands/reconcile.command.js';
import {
  SettlementsCommand,
  SettlementsForgetCommand,
  SettlementsPullCommand,
  SettlementsStatusCommand,
} from './commands/settlements.command.js';
import {
  SettlementsAcknowledgeCommand,
  SettlementsReconcileCommand,
} from './commands/settlements-reconcile.command.js';
import { TopicsCommand, TopicsCreateCommand } from './commands/topics.command.js';

export interface CliModuleOptions {
  readonly config: CliConfig;
  readonly logger: AppLogger;
  readonly runtime: CliRuntime;
  readonly createProducer: CliProducerFactory;
}

/**
 * The operator commands (CONTRACT §6). Nothing connects before a command needs it: a
 * command's services come from the feature modules, composed when it runs (CliFeatures).
 */
@Module({})
export class CliModule {
  static forRoot(options: CliModuleOptions): DynamicModule {
    return {
      module: CliModule,
      providers: [
        { provide: CLI_CONFIG, useValue: options.config },
        { provide: APP_LOGGER, useValue: options.logger },
        { provide: CLI_RUNTIME, useValue: options.runtime },
        { provide: CLI_PRODUCER_FACTORY, useValue: options.createProducer },
        CliResources,
        CliFeatures,
        CliContext,
        DlqCommand,
        DlqReplayCommand,
        DlqDiscardCommand,
        InDoubtCommand,
        InDoubtListCommand,
        InDoubtResolveCommand,
        OrderCommand,
        OrderShowCommand,
        PrivacyCommand,
        PrivacyEraseCommand,
        PrivacyExportCommand,
        ReconcileCommand,
        SettlementsCommand,
        SettlementsForgetCommand,
        SettlementsPullCommand,
        SettlementsStatusCommand,
        SettlementsReconcileCommand,
        SettlementsAcknowledgeCommand,
        TopicsCommand,
        TopicsCreateCommand,
      ],
    };
  }
}
