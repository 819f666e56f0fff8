import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  HealthCheckService,
  HealthIndicatorService,
  type HealthCheckResult,
  type HealthIndicatorFunction,
} from '@nestjs/terminus';
import { Database } from '../../database/database.js';
import { KafkaAuthorizationStatus } from '../../messaging/security/kafka-authorization.js';
import { InboundEventsTransport } from '../../messaging/transport/inbound-events.transport.js';

/**
 * Readiness: the database answers, the order consumer is connected and Kafka answered it
 * within the last 10 s (not before start-up has finished), and Kafka denies the worker no
 * operation it needs. One check for `GET /health/ready` and for the readiness gauge on
 * /metrics (readiness.metrics.ts), so that both always say the same.
 */
@Injectable()
export class Readiness {
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

  /** The order-events transport, when the application has one. */
  transport(): InboundEventsTransport | undefined {
    try {
      return this.modules.get(InboundEventsTransport, { strict: false });
    } catch {
      return undefined;
    }
  }

  /** The result `/health/ready` answers; throws ServiceUnavailableException (503) when down. */
  check(): Promise<HealthCheckResult> {
    return this.health.check(this.checks());
  }

  /** Whether `/health/ready` would answer 200 now. */
  async ready(): Promise<boolean> {
    try {
      await this.check();
      return true;
    } catch {
      return false;
    }
  }

  private checks(): HealthIndicatorFunction[] {
    return [
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
    ];
  }
}
