/** The kinds of value the environment holds: flags, URLs, durations, sizes, file paths. */
import { z } from 'zod';
import { CLEAR_TEXT_URL_MESSAGE, isClearTextToRemote } from './transport-security.js';

export const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

export const httpUrl = z
  .string()
  .url({ message: 'must be an absolute URL' })
  .refine((value) => /^https?:\/\//.test(value), { message: 'must be an http(s) URL' })
  .transform((value) => value.replace(/\/+$/, ''));

/** An http(s) URL that carries secrets: https, or plain http to a loopback host only. */
export const httpsUnlessLoopback = httpUrl.refine((value) => !isClearTextToRemote(value), {
  message: CLEAR_TEXT_URL_MESSAGE,
});

export const positiveInt = z.coerce.number().int().positive();

/** Durations are milliseconds, or a number with a unit: 500ms, 30s, 5m, 1h, 8d. */
export const duration = z.string().transform((value, ctx) => {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!match) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a duration such as 500ms, 30s, 5m, 1h or 8d',
    });
    return z.NEVER;
  }
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms'] ?? 1;
  return Number(match[1]) * factor;
});

/** Sizes are bytes, or a number with a binary unit: 512KiB, 32MiB, 1GiB. */
export const byteSize = z.string().transform((value, ctx) => {
  const match = /^(\d+)\s*(B|KiB|MiB|GiB)?$/.exec(value.trim());
  if (!match || Number(match[1]) === 0) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a positive size in bytes, or with KiB, MiB or GiB (e.g. 32MiB)',
    });
    return z.NEVER;
  }
  const factor = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[match[2] ?? 'B'] ?? 1;
  return Number(match[1]) * factor;
});

/** A path to a file (its content is read when the part that needs it starts). */
export const filePath = z.string().trim().min(1);
