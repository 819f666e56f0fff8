/**
 * The one owner of waking the outbox relay (issue 28). A feature that writes outbox rows in
 * a transaction of its own calls `committed()` once that transaction committed; the order
 * pipeline's batched transactions do the same through `afterEachCommitOf(batcher)`.
 *
 * Every producer of outbox rows injects OutboxCommitted without `@Optional()` and gets it
 * from a module it names in its imports: the application's OutboxModule (`committed()`
 * wakes its relay, and through a throttled NOTIFY the other replicas' relays), or
 * `OutboxCommittedModule.withoutRelay()` in a process that runs no relay (the CLI, whose
 * outbox writes NOTIFY the workers' relays inside their transaction; tests that read the
 * rows themselves). A module
 * that forgets both fails at boot (Nest cannot resolve OutboxCommitted) instead of
 * leaving its rows to the relay's idle poll. That poll (`idlePollMs`, 30 s) stays only as
 * the safety net for a wake-up lost to a crash or a dropped LISTEN connection.
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import type { TransactionBatcher } from '../database/transaction-batcher.js';

/**
 * A module that exports OutboxCommitted: the application's OutboxModule (its `forRoot`) or
 * `OutboxCommittedModule.withoutRelay()`. Producers of outbox rows take it as a required
 * `outbox` setting, so the wake-up is named where the module is built.
 */
export type OutboxImport = NonNullable<ModuleMetadata['imports']>[number];

export class OutboxCommitted {
  private constructor(
    private readonly wake: () => void,
    /** Who publishes what was committed: this process's relay, or the workers' (NOTIFY). */
    readonly publishedBy: 'this-relay' | 'notified-relays',
  ) {}

  /** Wakes `relay` (the application's OutboxRelay) after each commit. */
  static ofRelay(relay: { notify(): void }): OutboxCommitted {
    return new OutboxCommitted(() => relay.notify(), 'this-relay');
  }

  /**
   * For a process without a relay: nothing to wake here. The CLI's outbox writes NOTIFY the
   * workers' relays inside their transaction (OutboxRepository's `notifyInTransaction`).
   */
  static withoutRelay(): OutboxCommitted {
    return new OutboxCommitted(() => undefined, 'notified-relays');
  }

  /** Outbox rows were just committed: publish them now rather than at the next poll. */
  committed(): void {
    this.wake();
  }

  /**
   * Calls `committed()` after every batch `batcher` commits (the order pipeline, dead
   * letters and supersede steps write their outbox rows in its batches). Returns the
   * unsubscribe function. `also` hears each batch too (e.g. a metric of its size).
   */
  afterEachCommitOf(
    batcher: Pick<TransactionBatcher, 'onCommit'>,
    also?: (units: number) => void,
  ): () => void {
    return batcher.onCommit((batch) => {
      this.committed();
      also?.(batch.units);
    });
  }
}

/**
 * OutboxCommitted for a process that runs no relay (the CLI, tests that read the outbox
 * themselves), named in the imports where the worker names its OutboxModule. The CLI pairs
 * it with `OUTBOX_REPOSITORY_OPTIONS: { notifyInTransaction: true }` (provided globally),
 * so that the workers' relays hear of its rows at once.
 */
@Module({})
export class OutboxCommittedModule {
  static withoutRelay(): DynamicModule {
    return {
      module: OutboxCommittedModule,
      providers: [{ provide: OutboxCommitted, useValue: OutboxCommitted.withoutRelay() }],
      exports: [OutboxCommitted],
    };
  }
}
