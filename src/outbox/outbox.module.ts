/**
 * Nest wiring of the outbox: the repository the handlers write with, and the relay that
 * publishes. The relay starts when the application has bootstrapped and, on shutdown,
 * first flushes what is pending (bounded by `flushTimeoutMs`) and then stops, releasing
 * its bucket locks.
 *
 * Needs from the application: `DataSource` (DatabaseModule) and `MESSAGE_PRODUCER`, either
 * from a global module or from a module passed in `imports`. The producer's owner
 * connects it before bootstrap and disconnects it in `onApplicationShutdown`, after the
 * relay's flush (Nest runs every `beforeApplicationShutdown` hook first).
 *
 * It exports OutboxCommitted, the one wake-up of its relay: every feature that writes
 * outbox rows names this module in its imports and calls `committed()` after its commit.
 *
 *   OutboxModule.forRoot({ imports: [MessagingModule], relay: { idlePollMs: 500 } })
 */
import {
  Inject,
  Module,
  Optional,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type ModuleMetadata,
  type OnApplicationBootstrap,
  type Provider,
} from '@nestjs/common';
import { DatabaseModule } from '../database/database.module.js';
import { Database } from '../database/database.js';
import { OutboxCommitted } from './outbox-committed.js';
import { OutboxEntity } from './outbox.entity.js';
import { OutboxRepository } from './outbox.repository.js';
import {
  OUTBOX_RELAY_METRICS,
  OUTBOX_RELAY_OPTIONS,
  OutboxRelay,
  type OutboxRelayMetrics,
  type OutboxRelayOptions,
} from './outbox.relay.js';

export interface OutboxModuleOptions extends Pick<ModuleMetadata, 'imports'> {
  readonly relay?: OutboxRelayOptions;
  readonly metrics?: OutboxRelayMetrics;
  /** Start the relay with the application (default true; false for tools and some tests). */
  readonly autoStart?: boolean;
}

const OUTBOX_AUTO_START = Symbol('OUTBOX_AUTO_START');

export const OUTBOX_ENTITIES = [OutboxEntity];

@Module({
  imports: [DatabaseModule.forFeature(OUTBOX_ENTITIES)],
  // Database is a thin wrapper over the DataSource's pool; provided here so that the
  // module works whether or not the application provides it globally.
  providers: [
    Database,
    OutboxRepository,
    OutboxRelay,
    {
      provide: OutboxCommitted,
      inject: [OutboxRelay],
      useFactory: (relay: OutboxRelay) => OutboxCommitted.ofRelay(relay),
    },
  ],
  exports: [OutboxRepository, OutboxRelay, OutboxCommitted],
})
export class OutboxModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(OutboxRelay) private readonly relay: OutboxRelay,
    @Optional() @Inject(OUTBOX_AUTO_START) private readonly autoStart: boolean = true,
  ) {}

  static forRoot(options: OutboxModuleOptions = {}): DynamicModule {
    const providers: Provider[] = [
      { provide: OUTBOX_RELAY_OPTIONS, useValue: options.relay ?? {} },
      { provide: OUTBOX_AUTO_START, useValue: options.autoStart ?? true },
    ];
    if (options.metrics)
      providers.push({ provide: OUTBOX_RELAY_METRICS, useValue: options.metrics });
    return {
      module: OutboxModule,
      imports: options.imports ?? [],
      providers,
      exports: [OutboxRepository, OutboxRelay, OutboxCommitted],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.autoStart) await this.relay.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.relay.isRunning) return;
    await this.relay.flush();
    await this.relay.stop();
  }
}
