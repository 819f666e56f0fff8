/**
 * Deletes processed inbox rows past the retention (default 8 days, so dedupe keys live
 * longer than Payflow's 5.4-day retry span and at least 7 days). Runs every
 * `pruneIntervalMs` from application bootstrap; `prune()` can also be called directly.
 */
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import {
  WEBHOOK_RECEIVER_OPTIONS,
  type ResolvedReceiverOptions,
} from '../receiver/receiver.options.js';
import { WebhookInboxRepository } from './webhook-inbox.repository.js';

@Injectable()
export class WebhookInboxPruner implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    @Inject(WebhookInboxRepository) private readonly inbox: WebhookInboxRepository,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    @Inject(WEBHOOK_RECEIVER_OPTIONS) private readonly options: ResolvedReceiverOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (this.options.pruneIntervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.prune().catch((error: unknown) =>
        this.logger.warn({ err: error }, 'webhook inbox pruning failed (retried next time)'),
      );
    }, this.options.pruneIntervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** Deletes processed rows received before the retention; returns how many. */
  prune(): Promise<number> {
    this.running ??= this.inbox
      .prune(this.options.inboxRetentionMs)
      .then((deleted) => {
        if (deleted > 0) this.logger.info({ deleted }, 'webhook inbox pruned');
        return deleted;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }
}
