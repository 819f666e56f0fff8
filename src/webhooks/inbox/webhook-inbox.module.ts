/**
 * The inbox as seen by its two sides: the receiver (writes rows, then notifies) and the
 * processor (subscribes to `InboxSignal`, drains the table). Both import this module, so
 * they share one `InboxSignal`. Needs `Database` (DatabaseModule is global).
 */
import { Module } from '@nestjs/common';
import { InboxSignal } from './inbox.signal.js';
import { WebhookInboxRepository } from './webhook-inbox.repository.js';

@Module({
  providers: [InboxSignal, WebhookInboxRepository],
  exports: [InboxSignal, WebhookInboxRepository],
})
export class WebhookInboxModule {}
