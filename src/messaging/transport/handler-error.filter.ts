import { Catch, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';

/**
 * Lets a handler's error reach the inbound-events transport unchanged. Nest's default RPC
 * filter turns every error into `{ status: 'error', message: 'Internal server error' }`,
 * and the transport's failure policy decides retry / dead letter by the error's class.
 * Install it on the microservice before its listeners are registered (see
 * connectInboundEvents / createInboundEventsMicroservice in kafka/inbound-events.wiring.ts).
 */
@Catch()
export class OrderEventExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}
