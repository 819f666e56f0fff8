/**
 * The settlement reconciliation (SettlementReconciler) and the tables it owns, for every
 * door that reconciles: the pull of a night (after the file is stored), the nightly run and
 * the CLI's `settlements reconcile` / `settlements acknowledge`.
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG (SETTLEMENT_EXPECTED_WITHIN and
 * the topics of OutboxWriter); APP_LOGGER is optional, and so is the metrics Registry (the
 * open findings' series, findings.metrics.ts).
 */
import { Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { DatabaseModule } from '../../database/database.module.js';
import { Database } from '../../database/database.js';
import { OutboxWriterModule } from '../../outbox/outbox-writer.module.js';
import { PaymentsPersistenceModule } from '../../payments/payments-persistence.module.js';
import { SettlementNightsModule } from '../settlement-nights.module.js';
import { PromFindingsMetrics } from './findings.metrics.js';
import { RECONCILIATION_ENTITIES } from './settlement-reconcile.entity.js';
import { SettlementFindingsRepository } from './settlement-findings.repository.js';
import { SettlementLinesRepository } from './settlement-lines.repository.js';
import { RECONCILE_OPTIONS, SettlementReconciler } from './settlement-reconciler.js';
import { SettlementTotalsRepository } from './settlement-totals.repository.js';

const REPOSITORIES = [
  SettlementLinesRepository,
  SettlementFindingsRepository,
  SettlementTotalsRepository,
];

@Module({
  imports: [
    DatabaseModule.forFeature(RECONCILIATION_ENTITIES),
    SettlementNightsModule,
    OutboxWriterModule,
    PaymentsPersistenceModule,
  ],
  providers: [
    Database,
    ...REPOSITORIES,
    {
      provide: RECONCILE_OPTIONS,
      inject: [APP_CONFIG],
      useFactory: (config: Pick<AppConfig, 'SETTLEMENT_EXPECTED_WITHIN'>) => ({
        expectedWithinMs: config.SETTLEMENT_EXPECTED_WITHIN,
      }),
    },
    SettlementReconciler,
    {
      // Where the worker's metrics registry is (MetricsModule), the open findings' series.
      provide: PromFindingsMetrics,
      inject: [{ token: Registry, optional: true }, Database, SettlementFindingsRepository],
      useFactory: (
        registry: Registry | undefined,
        database: Database,
        findings: SettlementFindingsRepository,
      ): PromFindingsMetrics | null =>
        registry === undefined
          ? null
          : new PromFindingsMetrics(registry, () => findings.openByKind(database.sql)),
    },
  ],
  exports: [SettlementReconciler, ...REPOSITORIES],
})
export class SettlementReconcileModule {}
