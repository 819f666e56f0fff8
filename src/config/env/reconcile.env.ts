/** RECONCILE_*: the poller that asks Payflow for every open payment. */
import { z } from 'zod';
import { boolean, duration, positiveInt } from '../env-values.js';

export const reconcileEnv = z.object({
  RECONCILE_ENABLED: boolean.default(true),
  RECONCILE_INTERVAL: duration.default(5 * 60_000),
  RECONCILE_RATE_PER_SECOND: positiveInt.default(20),
  RECONCILE_CONCURRENCY: positiveInt.default(4),
});
