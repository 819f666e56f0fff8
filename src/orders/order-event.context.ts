import { BaseRpcContext } from '@nestjs/microservices';
import type { InboundMessage } from '../messaging/messaging.ports.js';

/**
 * What an @EventPattern handler gets as `@Ctx()` from the inbound-events transport: the
 * Kafka message (coordinates, raw key and value) and which attempt this is (1 = first).
 */
export class OrderEventContext extends BaseRpcContext<[InboundMessage, number]> {
  getMessage(): InboundMessage {
    return this.args[0];
  }

  getAttempt(): number {
    return this.args[1];
  }
}
