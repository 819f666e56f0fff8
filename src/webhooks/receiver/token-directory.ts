/**
 * Webhook token → (payment id, SHA-256 of its api key). Tokens never change once bound, so
 * answers are cached in a bounded LRU; unknown tokens are cached too, for a short time, so
 * a flood of made-up tokens costs one lookup per token per `negativeTtlMs`. Lookups that
 * miss the cache in the same event-loop turn share one query (`= ANY($1)`), and concurrent
 * lookups of one token share one promise.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { PaymentRepository, type TokenRow } from '../../payments/payment.repository.js';
import { WEBHOOK_RECEIVER_OPTIONS, type ResolvedReceiverOptions } from './receiver.options.js';

export interface TokenEntry {
  readonly paymentId: string;
  readonly apiKeyHash: Buffer;
  /** The W3C trace headers of the payment's creation, which its webhooks continue. */
  readonly traceHeaders: TokenRow['traceHeaders'];
}

interface Cached {
  readonly entry: TokenEntry | null;
  readonly expiresAt: number;
}

interface Waiting {
  readonly promise: Promise<TokenEntry | null>;
  readonly resolve: (entry: TokenEntry | null) => void;
  readonly reject: (error: unknown) => void;
}

const MAX_TOKENS_PER_QUERY = 1_000;

@Injectable()
export class WebhookTokenDirectory {
  private readonly cache = new Map<string, Cached>();
  private waiting = new Map<string, Waiting>();
  private scheduled: NodeJS.Immediate | undefined;
  private readonly maxSize: number;
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  /** Lookups that went to Postgres (tests, diagnosis). */
  queries = 0;

  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(PaymentRepository) private readonly payments: PaymentRepository,
    @Inject(WEBHOOK_RECEIVER_OPTIONS) options: ResolvedReceiverOptions,
  ) {
    this.maxSize = Math.max(1, options.authCacheSize);
    this.ttlMs = options.authCacheTtlMs;
    this.negativeTtlMs = options.authNegativeTtlMs;
  }

  lookup(token: string): Promise<TokenEntry | null> | TokenEntry | null {
    const cached = this.cache.get(token);
    const now = performance.now();
    if (cached !== undefined) {
      if (cached.expiresAt > now) {
        // LRU: move to the young end.
        this.cache.delete(token);
        this.cache.set(token, cached);
        return cached.entry;
      }
      this.cache.delete(token);
    }
    const pending = this.waiting.get(token);
    if (pending !== undefined) return pending.promise;
    let resolve!: (entry: TokenEntry | null) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<TokenEntry | null>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.waiting.set(token, { promise, resolve, reject });
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      void this.load();
    });
    return promise;
  }

  /** Forgets everything cached (tests). */
  clear(): void {
    this.cache.clear();
  }

  private async load(): Promise<void> {
    const batch = this.waiting;
    this.waiting = new Map();
    const tokens = [...batch.keys()];
    for (let start = 0; start < tokens.length; start += MAX_TOKENS_PER_QUERY) {
      const chunk = tokens.slice(start, start + MAX_TOKENS_PER_QUERY);
      try {
        this.queries++;
        const rows = await this.payments.byWebhookTokens(this.database.sql, chunk);
        const found = new Map(rows.map((row) => [row.webhookToken, row]));
        const now = performance.now();
        for (const token of chunk) {
          const row = found.get(token);
          const entry =
            row === undefined
              ? null
              : {
                  paymentId: row.paymentId,
                  apiKeyHash: row.apiKeyHash,
                  traceHeaders: row.traceHeaders,
                };
          this.remember(token, {
            entry,
            expiresAt: now + (entry === null ? this.negativeTtlMs : this.ttlMs),
          });
          batch.get(token)?.resolve(entry);
        }
      } catch (error) {
        for (const token of chunk) batch.get(token)?.reject(error);
      }
    }
  }

  private remember(token: string, cached: Cached): void {
    if (this.cache.size >= this.maxSize) {
      const oldest = this.cache.keys().next();
      if (oldest.done !== true) this.cache.delete(oldest.value);
    }
    this.cache.set(token, cached);
  }
}
