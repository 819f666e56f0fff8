/** SETTLEMENT_*: the nightly settlement pull. */
import { z } from 'zod';
import { boolean, duration } from '../env-values.js';
import { validateCronExpression } from 'cron';
import { isTimeZone } from '../../timing/calendar.js';

export const settlementsEnv = z.object({
  SETTLEMENT_CRON: z
    .string()
    .trim()
    .refine((value) => validateCronExpression(value).valid, {
      message: 'must be a cron expression such as "0 30 2 * * *" (seconds first)',
    })
    .default('0 30 2 * * *'),
  SETTLEMENT_TIMEZONE: z
    .string()
    .refine(isTimeZone, { message: 'must be an IANA time zone such as Europe/Oslo' })
    .default('Europe/Oslo'),
  /** Run the nightly settlement pull in this process (the CLI pulls by hand either way). */
  SETTLEMENT_ENABLED: boolean.default(true),
  /** The nightly run also asks again for this many of the latest pulled nights (0 = none). */
  SETTLEMENT_RECHECK_NIGHTS: z.coerce.number().int().min(0).max(31).default(0),
  /**
   * A payment paid this long ago with no settlement line is `not_settled` (CONTRACT §10).
   * Default 3d: Payflow settles a payment on one of the next banking days, so three days
   * cover a weekend.
   */
  SETTLEMENT_EXPECTED_WITHIN: duration
    .default(3 * 86_400_000)
    .refine((ms) => ms >= 60_000, { message: 'must be at least 1m' }),
});
