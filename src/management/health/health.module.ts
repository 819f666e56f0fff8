import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Registry } from 'prom-client';
import { HealthController } from './health.controller.js';
import { Readiness } from './readiness.js';
import { ReadinessMetrics } from './readiness.metrics.js';

/**
 * /health/live and /health/ready, and the readiness gauge on /metrics (the same check as
 * /health/ready, evaluated at each scrape) in the worker's registry (MetricsModule).
 */
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [
    Readiness,
    {
      provide: ReadinessMetrics,
      inject: [Registry, Readiness],
      useFactory: (registry: Registry, readiness: Readiness): ReadinessMetrics =>
        new ReadinessMetrics(registry, () => readiness.ready()),
    },
  ],
})
export class HealthModule {}
