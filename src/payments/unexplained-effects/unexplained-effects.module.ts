/**
 * The check of Payflow's holdings (UnexplainedEffects) for the features that read payments
 * at Payflow and are built with Nest modules (the webhook processor, the reconciliation
 * poller), and the entity of its table. Needs (global): DataSource; optionally APP_LOGGER
 * and the metrics Registry (MetricsModule), without which nothing is counted.
 */
import { Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { Database } from '../../database/database.js';
import { DatabaseModule } from '../../database/database.module.js';
import { UNEXPLAINED_EFFECT_ENTITIES } from './unexplained-effect.entity.js';
import { UnexplainedEffects } from './unexplained-effects.service.js';

@Module({
  imports: [DatabaseModule.forFeature(UNEXPLAINED_EFFECT_ENTITIES)],
  providers: [
    Database,
    {
      provide: UnexplainedEffects,
      inject: [
        Database,
        { token: APP_LOGGER, optional: true },
        { token: Registry, optional: true },
      ],
      useFactory: (
        database: Database,
        logger: AppLogger | undefined,
        registry: Registry | undefined,
      ): UnexplainedEffects => UnexplainedEffects.create(database.sql, logger, registry),
    },
  ],
  exports: [UnexplainedEffects],
})
export class UnexplainedEffectsModule {}
