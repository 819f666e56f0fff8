/** RETENTION_PERSONAL_DATA (docs/privacy.md). */
import { z } from 'zod';
import { duration } from '../env-values.js';

export const retentionEnv = z.object({
  /**
   * Personal data of orders untouched for longer is erased, daily (CONTRACT §10,
   * docs/privacy.md); also the retention.ms `topics create` gives the `.dlq` topic.
   */
  RETENTION_PERSONAL_DATA: duration
    .default(90 * 86_400_000)
    .refine((ms) => ms >= 86_400_000, { message: 'must be at least 1d' }),
});
