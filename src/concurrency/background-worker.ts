/**
 * The lifecycle every background worker of the bridge shares (the reconciliation poller,
 * the webhook inbox processor, the nightly settlement cron): Nest starts it once the
 * application has bootstrapped, unless its options turned `autoStart` off (tests and the
 * CLI drive it by hand), and stops it before the application shuts down, waiting for the
 * work under way. It adds no timer of its own: what runs between start and stop is the
 * subclass's.
 */
import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';

export abstract class BackgroundWorker
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  /** Whether application bootstrap starts the worker. */
  protected abstract get autoStart(): boolean;

  /** Starts the background work. */
  abstract start(): void;

  /** Stops the background work; resolves once what was under way has ended. */
  abstract stop(): Promise<void>;

  onApplicationBootstrap(): void {
    if (this.autoStart) this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }
}
