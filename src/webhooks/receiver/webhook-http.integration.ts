/**
 * What the receiver needs from fastify itself, set up before the server listens:
 *
 * - the `application/json` parser keeps the body's bytes (the inbox stores them as
 *   received) and otherwise parses exactly as fastify's default parser (prototype
 *   poisoning refused, the adapter's bodyLimit);
 * - answers that fastify or Nest produce on their own for webhook URLs (body too large,
 *   unparsable JSON, unsupported media type, unknown route) are rewritten to the
 *   receiver's `{ code, message }` shape, without fastify's error codes or Nest's text;
 * - every answer on a webhook URL is counted by kind and outcome, with its ack latency.
 */
import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WEBHOOK_KINDS } from '../../payflow/wire/payflow.schemas.js';
import { WebhookRejection } from './receive-webhook.errors.js';
import {
  NO_RECEIVER_METRICS,
  WEBHOOK_RECEIVER_METRICS,
  type KindLabel,
  type ReceiveOutcome,
  type WebhookReceiverMetrics,
} from './receiver.metrics.js';
import { keepRawBody, markOutcome, outcomeOf } from './request-state.js';
import { WEBHOOK_ROUTE_PREFIX } from './webhook-receiver.controller.js';

type JsonParser = (
  request: FastifyRequest,
  body: string | Buffer,
  done: (error: Error | null, value?: unknown) => void,
) => void;

@Injectable()
export class WebhookHttpIntegration implements OnModuleInit {
  constructor(
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Optional()
    @Inject(WEBHOOK_RECEIVER_METRICS)
    private readonly metrics: WebhookReceiverMetrics = NO_RECEIVER_METRICS,
  ) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter as HttpAdapterHost['httpAdapter'] | undefined;
    if (adapter === undefined || adapter.getType() !== 'fastify') return;
    const fastify = adapter.getInstance<FastifyInstance>();
    this.keepRawJsonBodies(fastify);
    fastify.addHook('onSend', (request, reply, payload, done) => {
      if (
        !isWebhookUrl(request.url) ||
        reply.statusCode < 400 ||
        outcomeOf(request) !== undefined
      ) {
        done(null, payload);
        return;
      }
      // Produced outside the controller (parser, body limit, router): our shape instead.
      const rejection = WebhookRejection.forStatus(reply.statusCode);
      markOutcome(request, rejection.outcome);
      void reply.code(rejection.status);
      reply.header('content-type', 'application/json; charset=utf-8');
      // As the exception filter answers: one shape for every refusal, whoever produced it.
      reply.header('cache-control', 'no-store');
      for (const [name, value] of Object.entries(rejection.headers)) reply.header(name, value);
      done(null, JSON.stringify(rejection.body));
    });
    fastify.addHook('onResponse', (request, reply, done) => {
      if (isWebhookUrl(request.url)) this.count(request, reply);
      done();
    });
  }

  private keepRawJsonBodies(fastify: FastifyInstance): void {
    const { onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig as {
      onProtoPoisoning?: 'error' | 'remove' | 'ignore';
      onConstructorPoisoning?: 'error' | 'remove' | 'ignore';
    };
    const parse = fastify.getDefaultJsonParser(
      onProtoPoisoning ?? 'error',
      onConstructorPoisoning ?? 'error',
    ) as unknown as JsonParser;
    if (fastify.hasContentTypeParser('application/json')) {
      fastify.removeContentTypeParser('application/json');
    }
    fastify.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: fastify.initialConfig.bodyLimit },
      (request, body: Buffer, done) => {
        keepRawBody(request, body);
        parse(request, body, done);
      },
    );
  }

  private count(request: FastifyRequest, reply: FastifyReply): void {
    const outcome: ReceiveOutcome =
      outcomeOf(request) ?? (reply.statusCode < 300 ? 'accepted' : 'rejected');
    this.metrics.received(kindLabel(request.url), outcome, reply.elapsedTime / 1000);
  }
}

function isWebhookUrl(url: string): boolean {
  return url.startsWith(WEBHOOK_ROUTE_PREFIX);
}

function kindLabel(url: string): KindLabel {
  const path = url.split('?', 1)[0] ?? '';
  const kind = path.slice(path.lastIndexOf('/') + 1);
  return (WEBHOOK_KINDS as readonly string[]).includes(kind) ? (kind as KindLabel) : 'unknown';
}
