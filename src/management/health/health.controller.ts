import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { Database } from '../../database/database.js';
import { ServedOnManagementPort } from '../listener-constraint.js';
import { KafkaAuthorizationStatus } from '../../messaging/security/kafka-authorization.js';
import { InboundEventsTransport } from '../../messaging/transport/inbound-events.transport.js';

/**
 * Liveness (the process answers and its order consumer neither crashed nor is stuck) and
 * readiness (the database answers, the order consumer is connected and Kafka answered it
 * within the last 10 s; not before start-up has finished). On the management port only.
 */
@Controller('health')
@ServedOnManagementPort()
export class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(Database) private readonly database: Database,
    @Inject(ModuleRef) private readonly modules: ModuleRef,
  ) {}

  /** The denials (ACLs withdrawn) Kafka answered lately, when the application has Kafka. */
  private authorization(): KafkaAuthorizationStatus | undefined {
    try {
      return this.modules.get(KafkaAuthorizationStatus, { strict: false });
    } catch {
      return undefined;
    }
  }

  private transport(): InboundEventsTransport | undefined {
    try {
      return this.modules.get(InboundEventsTransport, { strict: false });
    } catch {
      return undefined;
    }
  }

  /**
   * Fails (503) once the order consumer crashed for good or is stuck (no fetch, heartbeat
   * or join for the transport's `stuckAfterMs`): restarting the process is the cure.
   */
  @Get('live')
  live(): { status: 'ok'; consumer: string } {
    const transport = this.transport();
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
    return this.health.check([
      () =>
        this.indicators
          .check('database')
          .attempt(async () => {
            await this.database.ping();
            return {};
          })
          .withTimeout(2000),
      () => {
        const session = this.indicators.check('orderEvents');
        const transport = this.transport();
        if (transport === undefined) return session.down({ consumer: 'absent' });
        const { ready, status, sinceProgressMs } = transport.readiness();
        return ready
          ? session.up({ consumer: status })
          : session.down({ consumer: status, sinceKafkaAnsweredMs: sinceProgressMs });
      },
      () => {
        // Down while Kafka denies an operation the worker needs (an ACL withdrawn): the work
        // waits and goes on by itself once the ACL is back. Names what is denied, and since when.
        const session = this.indicators.check('kafkaAuthorization');
        const denials = this.authorization()?.denials() ?? [];
        if (denials.length === 0) return session.up();
        return session.down({
          denied: denials.map(({ resource, name, operation, since, lastDeniedAt }) => ({
            resource,
            name,
            operation,
            since,
            lastDeniedAt,
          })),
        });
      },
    ]);
  }
}
