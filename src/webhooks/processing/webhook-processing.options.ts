/**
 * The webhook inbox processor's settings, injection tokens and pass result (kept apart from
 * the processor so the module and the tests can name them without the processor's
 * dependencies).
 */
export const WEBHOOK_PROCESSING_OPTIONS = Symbol('WEBHOOK_PROCESSING_OPTIONS');
/** The Postgres channel a receiver NOTIFYs after storing webhooks (webhooks-processing.module). */
export const WEBHOOK_INBOX_CHANNEL = 'payflow_webhook_inbox';

export interface WebhookProcessingOptions {
  /** Start the drain loop with the application. Default true. */
  readonly autoStart?: boolean;
  /** Pause between passes that found nothing (a wake-up cuts it short). Default 1 000 ms. */
  readonly pollIntervalMs?: number;
  /** Rows claimed per pass. Default 100. */
  readonly batchSize?: number;
  /** Payments processed at once. Default 4. */
  readonly concurrency?: number;
  /** How long claimed rows belong to this worker. Default 120 000 ms. */
  readonly claimLeaseMs?: number;
  /** First retry delay after a transient failure; doubles per attempt. Default 5 000 ms. */
  readonly retryBaseMs?: number;
  /** Longest retry delay. Default 300 000 ms (5 min). */
  readonly retryMaxMs?: number;
}

export const DEFAULTS: Required<WebhookProcessingOptions> = {
  autoStart: true,
  pollIntervalMs: 1_000,
  batchSize: 100,
  concurrency: 4,
  claimLeaseMs: 120_000,
  retryBaseMs: 5_000,
  retryMaxMs: 300_000,
};

export interface DrainResult {
  readonly claimed: number;
  readonly payments: number;
  /** Rows marked processed (with or without an error). */
  readonly processed: number;
  /** Rows left pending for a later attempt. */
  readonly deferred: number;
  /** Status events written. */
  readonly events: number;
}
