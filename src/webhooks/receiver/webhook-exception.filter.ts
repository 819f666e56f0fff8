/**
 * Every error of the webhook controller becomes `{ code, message }` with the matching
 * status: no stack, no exception class, no internal detail. Unexpected errors are logged
 * and answered 500 `internal_error` (Payflow retries).
 */
import {
  Catch,
  HttpException,
  Inject,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { WebhookRejection } from './receive-webhook.errors.js';
import { markOutcome } from './request-state.js';

@Catch()
export class WebhookExceptionFilter implements ExceptionFilter {
  constructor(@Inject(APP_LOGGER) private readonly logger: AppLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    let rejection: WebhookRejection;
    if (exception instanceof WebhookRejection) rejection = exception;
    else if (exception instanceof HttpException)
      rejection = WebhookRejection.forStatus(exception.getStatus());
    else {
      this.logger.error({ err: exception }, 'webhook receiver failed');
      rejection = WebhookRejection.internal();
    }
    markOutcome(request, rejection.outcome);
    void reply
      .status(rejection.status)
      .headers({ ...rejection.headers, 'cache-control': 'no-store' })
      .type('application/json; charset=utf-8')
      .send(rejection.body);
  }
}
