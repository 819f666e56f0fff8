import { Controller, Get, Inject } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { OrderEventsTransport } from '../messaging/order-events.transport.js';

/**
 * Liveness (the process answers) and readiness (the database answers and the order
 * consumer is connected; not before start-up has finished).
 */
@Controller('health')
export class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(ModuleRef) private readonly modules: ModuleRef,
  ) {}

  private transportStatus(): string {
    try {
      return this.modules.get(OrderEventsTransport, { strict: false }).currentStatus;
    } catch {
      return 'absent';
    }
  }

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([
      () =>
        this.indicators
          .check('database')
          .attempt(async () => {
            await this.dataSource.query('SELECT 1');
            return {};
          })
          .withTimeout(2000),
      () => {
        const status = this.transportStatus();
        const session = this.indicators.check('orderEvents');
        return status === 'connected'
          ? session.up({ consumer: status })
          : session.down({ consumer: status });
      },
    ]);
  }
}
