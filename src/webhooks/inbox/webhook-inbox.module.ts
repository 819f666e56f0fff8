/**
 * The inbox as seen by its two sides: the receiver (writes rows, then notifies) and the
 * processor (subscribes to `InboxSignal`, drains the table). Both import this module, so
 * they share one `InboxSignal`. Needs `Database` (DatabaseModule is global); registers the
 * table's entity.
 */
import { Module } from '@nestjs/common';
import { DatabaseModule } from '../../database/database.module.js';
import { WebhookInboxEntity } from '../webhook-inbox.entity.js';
import { InboxSignal } from './inbox.signal.js';
import { WebhookInboxRepository } from './webhook-inbox.repository.js';

export const WEBHOOK_ENTITIES = [WebhookInboxEntity];

@Module({
  imports: [DatabaseModule.forFeature(WEBHOOK_ENTITIES)],
  providers: [InboxSignal, WebhookInboxRepository],
  exports: [InboxSignal, WebhookInboxRepository],
})
export class WebhookInboxModule {}
