/**
 * What the management listener serves: health (HealthModule's controller) and the
 * Prometheus scrape, and the operator console once it exists. Every controller here is
 * marked `@ServedOnManagementPort()`, which is what keeps it off the public port; this
 * module only gathers them.
 */
import { Module } from '@nestjs/common';
import { HealthModule } from './health/health.module.js';
import { MetricsController } from './metrics/metrics.controller.js';

@Module({
  imports: [HealthModule],
  controllers: [MetricsController],
})
export class ManagementModule {}
