/** Tunables of the webhook receiver (the application maps its environment onto these). */
export interface WebhookReceiverOptions {
  /** Sustained webhooks per second accepted per token. Default 20. */
  readonly rateLimitPerSecond?: number;
  /** Bucket size per token (a burst above the sustained rate). Default 40. */
  readonly rateLimitBurst?: number;
  /** Tokens whose payment (or absence) is cached in memory. Default 100,000. */
  readonly authCacheSize?: number;
  /** How long a known token stays cached. Default 10 minutes. */
  readonly authCacheTtlMs?: number;
  /** How long an unknown token stays cached as unknown. Default 10 seconds. */
  readonly authNegativeTtlMs?: number;
  /** Processed inbox rows older than this are pruned. Default 8 days (dedupe keys live ≥ 7). */
  readonly inboxRetentionMs?: number;
  /** How often pruning runs; 0 = never (the application schedules `prune()`). Default 1 h. */
  readonly pruneIntervalMs?: number;
}

export type ResolvedReceiverOptions = Required<WebhookReceiverOptions>;

export const WEBHOOK_RECEIVER_OPTIONS = Symbol('WEBHOOK_RECEIVER_OPTIONS');

export const DEFAULT_RECEIVER_OPTIONS: ResolvedReceiverOptions = {
  rateLimitPerSecond: 20,
  rateLimitBurst: 40,
  authCacheSize: 100_000,
  authCacheTtlMs: 10 * 60_000,
  authNegativeTtlMs: 10_000,
  inboxRetentionMs: 8 * 24 * 3_600_000,
  pruneIntervalMs: 3_600_000,
};

export function resolveReceiverOptions(
  options: WebhookReceiverOptions = {},
): ResolvedReceiverOptions {
  const defined = Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as WebhookReceiverOptions;
  return { ...DEFAULT_RECEIVER_OPTIONS, ...defined };
}
