/**
 * What the management listener serves: health (HealthModule's controller and the readiness
 * gauge) and the Prometheus scrape with the certificates' expiry gauge, and the operator
 * console once it exists. Every controller here is marked `@ServedOnManagementPort()`,
 * which is what keeps it off the public port; this module only gathers them.
 */
import { Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { HealthModule } from './health/health.module.js';
import {
  CertificateMetrics,
  certificateFiles,
  readCertificateExpiries,
} from './metrics/certificates.metrics.js';
import { MetricsController } from './metrics/metrics.controller.js';

@Module({
  imports: [HealthModule],
  controllers: [MetricsController],
  providers: [
    {
      provide: CertificateMetrics,
      inject: [Registry, APP_CONFIG],
      useFactory: (registry: Registry, config: AppConfig): CertificateMetrics =>
        new CertificateMetrics(registry, readCertificateExpiries(certificateFiles(config))),
    },
  ],
})
export class ManagementModule {}
