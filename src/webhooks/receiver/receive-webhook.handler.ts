/**
 * Accepts one webhook: per-token rate limit, authentication against the payment's
 * api-key hash, then the inbox row written in a shared (group-committed) transaction.
 * Resolves only after the COMMIT; the processor is signalled after it. Never processes.
 *
 * An authenticated webhook is received in a span (kind server) under the request's own
 * `traceparent`, else under the trace of the payment's creation (CONTRACT §8); the request's
 * headers, stored with the row, keep its trace for the processor.
 */
import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_LOGGER } from '../../logging/logger.module.js';
import { hashApiKey } from '../../orders/new-payment/webhook-credentials.js';
import type { AppLogger } from '../../logging/logger.js';
import { TransactionBatcher } from '../../database/transaction-batcher.js';
import { contextFromHeaders, traceIdOf, Tracing, type TraceSpan } from '../../tracing/tracing.js';
import { InboxSignal } from '../inbox/inbox.signal.js';
import { WebhookInboxRepository } from '../inbox/webhook-inbox.repository.js';
import { isPlausibleToken, type ReceiveWebhookCommand } from './receive-webhook.command.js';
import { WebhookRejection } from './receive-webhook.errors.js';
import { TokenBucketLimiter } from './rate-limiter.js';
import { WEBHOOK_RECEIVER_OPTIONS, type ResolvedReceiverOptions } from './receiver.options.js';
import { WebhookTokenDirectory, type TokenEntry } from './token-directory.js';

export type ReceiveResult = 'accepted' | 'duplicate';

/** Compared against when the token is unknown, so both paths cost the same hashing. */
const NO_HASH = Buffer.alloc(32);

@Injectable()
export class ReceiveWebhookHandler {
  private readonly limiter: TokenBucketLimiter;

  constructor(
    @Inject(WebhookTokenDirectory) private readonly directory: WebhookTokenDirectory,
    @Inject(TransactionBatcher) private readonly batcher: TransactionBatcher,
    @Inject(WebhookInboxRepository) private readonly inbox: WebhookInboxRepository,
    @Inject(InboxSignal) private readonly signal: InboxSignal,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    @Inject(WEBHOOK_RECEIVER_OPTIONS) options: ResolvedReceiverOptions,
    @Optional() @Inject(Tracing) private readonly tracing: Tracing = Tracing.off(),
  ) {
    this.limiter = new TokenBucketLimiter(options.rateLimitPerSecond, options.rateLimitBurst);
  }

  async handle(command: ReceiveWebhookCommand): Promise<ReceiveResult> {
    const rate = this.limiter.take(command.token);
    if (!rate.allowed) throw WebhookRejection.rateLimited(rate.retryAfterSeconds);
    const entry = await this.authenticate(command);
    const span = this.receiveSpan(command, entry);
    try {
      const result = await this.store(command, entry, span);
      span.setAttributes({ 'webhook.outcome': result });
      span.end();
      return result;
    } catch (error) {
      span.end(error);
      throw error;
    }
  }

  private receiveSpan(command: ReceiveWebhookCommand, entry: TokenEntry): TraceSpan {
    const own = contextFromHeaders(command.headers);
    return this.tracing.start(
      'webhook.receive',
      traceIdOf(own) !== undefined || entry.traceHeaders === null
        ? own
        : contextFromHeaders({ ...entry.traceHeaders }),
      {
        kind: 'server',
        attributes: { 'webhook.kind': command.kind, 'payment.id': entry.paymentId },
      },
    );
  }

  private async store(
    command: ReceiveWebhookCommand,
    entry: TokenEntry,
    span: TraceSpan,
  ): Promise<ReceiveResult> {
    let outcome;
    try {
      outcome = await this.batcher.run((tx) =>
        this.inbox.insert(tx, {
          paymentId: entry.paymentId,
          kind: command.kind,
          dedupeKey: command.dedupeKey,
          body: command.rawBody,
          headers: command.headers,
        }),
      );
    } catch (error) {
      this.logger.error(
        { err: error, paymentId: entry.paymentId, kind: command.kind, traceId: span.traceId },
        'webhook could not be stored',
      );
      throw WebhookRejection.unavailable();
    }
    if (!outcome.inserted) return 'duplicate';
    this.signal.notify({
      inboxId: outcome.inboxId,
      paymentId: entry.paymentId,
      kind: command.kind,
    });
    return 'accepted';
  }

  private async authenticate(command: ReceiveWebhookCommand): Promise<TokenEntry> {
    let entry: TokenEntry | null = null;
    if (isPlausibleToken(command.token)) {
      try {
        entry = await this.directory.lookup(command.token);
      } catch (error) {
        this.logger.error({ err: error, kind: command.kind }, 'webhook token lookup failed');
        throw WebhookRejection.unavailable();
      }
    }
    // The same digest as the stored one (webhook-credentials.ts), of a missing key too, so
    // that a refusal takes as long as an acceptance.
    const offered = hashApiKey(command.apiKey ?? '');
    const expected = entry?.apiKeyHash.length === 32 ? entry.apiKeyHash : NO_HASH;
    const matches = timingSafeEqual(offered, expected);
    if (entry === null || command.apiKey === undefined || !matches) {
      this.logger.warn(
        {
          kind: command.kind,
          knownToken: entry !== null,
          keyOffered: command.apiKey !== undefined,
        },
        'webhook refused: unknown address or wrong api key',
      );
      throw WebhookRejection.unauthorized();
    }
    return entry;
  }
}
