/**
 * OutboxWriter for the modules that publish events (orders, dead letters, status sync,
 * settlements): one writer, so that the events of one batched transaction share one
 * outbox insert. Needs APP_CONFIG (global) for the topics.
 */
import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { OutboxRepository } from './outbox.repository.js';
import { OUTBOUND_TOPICS, OutboxWriter, outboundTopicsFromConfig } from './outbox-writer.js';

@Module({
  providers: [
    OutboxRepository,
    {
      provide: OUTBOUND_TOPICS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => outboundTopicsFromConfig(config),
    },
    OutboxWriter,
  ],
  exports: [OutboxWriter],
})
export class OutboxWriterModule {}
