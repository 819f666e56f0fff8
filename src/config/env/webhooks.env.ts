/** WEBHOOK_*: the receiver's public URL, its limits, the inbox. */
import { z } from 'zod';
import { duration, httpUrl, positiveInt } from '../env-values.js';

export const webhooksEnv = z.object({
  WEBHOOK_PUBLIC_BASE_URL: httpUrl.refine((value) => value.startsWith('https://'), {
    message: 'must be an https:// URL (Payflow never calls plain http)',
  }),
  WEBHOOK_RATE_LIMIT_PER_SECOND: positiveInt.default(20),
  WEBHOOK_RATE_LIMIT_BURST: positiveInt.default(40),
  WEBHOOK_AUTH_CACHE_SIZE: positiveInt.default(100_000),
  WEBHOOK_INBOX_RETENTION: duration
    .default(8 * 24 * 3_600_000)
    .refine((ms) => ms >= 7 * 24 * 3_600_000, {
      message: 'must be at least 7d (longer than Payflow retries a webhook)',
    }),
  /**
   * New webhooks wake the processor of the replica that stored them at once; this poll
   * only finds deferred retries (back-off from 5 s) and rows of a replica that died (their
   * 120 s lease), so it need not cost an idle worker one transaction a second.
   */
  WEBHOOK_PROCESSING_POLL_INTERVAL: duration.default(5_000),
});
