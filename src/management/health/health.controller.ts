import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, type HealthCheckResult } from '@nestjs/terminus';
import { ServedOnManagementPort } from '../listener-constraint.js';
import { Readiness } from './readiness.js';

/**
 * Liveness (the process answers and its order consumer neither crashed nor is stuck) and
 * readiness (readiness.ts: the database answers, the order consumer is connected and Kafka
 * answered it within the last 10 s; not before start-up has finished). On the management
 * port only.
 */
@Controller('health')
@ServedOnManagementPort()
export class HealthController {
  constructor(@Inject(Readiness) private readonly readiness: Readiness) {}

  /**
   * Fails (503) once the order consumer crashed for good or is stuck (no fetch, heartbeat
   * or join for the transport's `stuckAfterMs`): restarting the process is the cure.
   */
  @Get('live')
  live(): { status: 'ok'; consumer: string } {
    const transport = this.readiness.transport();
    if (transport === undefined) return { status: 'ok', consumer: 'absent' };
    const liveness = transport.liveness();
    if (!liveness.alive) {
      throw new ServiceUnavailableException({
        status: 'error',
        consumer: liveness.status,
        reason: liveness.reason,
        sinceProgressMs: liveness.sinceProgressMs,
      });
    }
    return { status: 'ok', consumer: liveness.status };
  }

  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.readiness.check();
  }
}
