/**
 * `POST /webhooks/payflow/:token/:kind`: parses the request into a command and hands it to
 * the handler. 200 `{ status: 'accepted' | 'duplicate' }` once the webhook is stored.
 */
import { Controller, HttpCode, Inject, Param, Post, Req, UseFilters } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { buildReceiveCommand } from './receive-webhook.command.js';
import { ReceiveWebhookHandler, type ReceiveResult } from './receive-webhook.handler.js';
import { markOutcome, rawBodyOf } from './request-state.js';
import { WebhookExceptionFilter } from './webhook-exception.filter.js';

export const WEBHOOK_ROUTE_PREFIX = '/webhooks/payflow/';

@Controller('webhooks/payflow')
@UseFilters(WebhookExceptionFilter)
export class WebhookReceiverController {
  constructor(@Inject(ReceiveWebhookHandler) private readonly handler: ReceiveWebhookHandler) {}

  @Post(':token/:kind')
  @HttpCode(200)
  async receive(
    @Param('token') token: string,
    @Param('kind') kind: string,
    @Req() request: FastifyRequest,
  ): Promise<{ status: ReceiveResult }> {
    const command = buildReceiveCommand({
      token,
      kind,
      headers: request.headers,
      body: request.body,
      rawBody: rawBodyOf(request),
    });
    const status = await this.handler.handle(command);
    markOutcome(request, status);
    return { status };
  }
}
