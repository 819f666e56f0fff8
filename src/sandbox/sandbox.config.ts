/**
 * Environment of `npm run sandbox`, validated once at start-up. A bad value is one line
 * naming the variable and what is wrong.
 */
import { z } from 'zod';
import { DEFAULT_MAX_MOVEMENTS } from './state/movement-ledger.js';
import { DEFAULT_SETTLEMENT_TIMING } from './settlement/booking.js';
import { SHAPE_NAMES } from './payments/shapes.js';
import { DEFAULT_MAX_PAYMENTS } from './state/state.js';
import { DEFAULT_MAX_WEBHOOK_DELIVERIES } from './webhooks/webhooks.js';

const integer = (min: number, max: number, what: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, { message: `must be ${what}` })
    .transform(Number)
    .refine((value) => value >= min && value <= max, { message: `must be ${what}` });

export const sandboxEnvSchema = z.object({
  SANDBOX_PORT: integer(0, 65_535, 'a port number 0-65535').default(4010),
  SANDBOX_HOST: z.string().trim().min(1, { message: 'must not be empty' }).default('127.0.0.1'),
  SANDBOX_LATENCY_MS: integer(0, 60_000, 'an integer of milliseconds 0-60000').default(0),
  SANDBOX_TOKEN_TTL_SECONDS: integer(1, 31_536_000, 'an integer of seconds 1-31536000').default(
    3600,
  ),
  SANDBOX_WEBHOOK_CA_FILE: z.string().trim().min(1, { message: 'must not be empty' }).optional(),
  /** The secret of the built-in client `sandbox-client`, from a file; default sandbox-secret. */
  SANDBOX_CLIENT_SECRET_FILE: z.string().trim().min(1, { message: 'must not be empty' }).optional(),
  SANDBOX_WEBHOOK_WHITELIST: z
    .string()
    .transform((value) => value.split(',').map((domain) => domain.trim().toLowerCase()))
    .refine((domains) => domains.every((domain) => /^[a-z0-9.-]+$/.test(domain)), {
      message: 'must be a comma-separated list of domain names',
    })
    .optional(),
  SANDBOX_SHAPES: z
    .enum(SHAPE_NAMES, { message: `must be ${SHAPE_NAMES.join(' or ')}` })
    .default('standard'),
  /** Payments kept at most (docs/sandbox.md, "A long run"). */
  SANDBOX_MAX_PAYMENTS: integer(1, 10_000_000, 'an integer 1-10000000').default(
    DEFAULT_MAX_PAYMENTS,
  ),
  /** Webhook deliveries kept at most. */
  SANDBOX_MAX_WEBHOOK_DELIVERIES: integer(1, 10_000_000, 'an integer 1-10000000').default(
    DEFAULT_MAX_WEBHOOK_DELIVERIES,
  ),
  /** Settlement movements (CSV rows) kept at most. */
  SANDBOX_MAX_SETTLEMENT_MOVEMENTS: integer(1, 100_000_000, 'an integer 1-100000000').default(
    DEFAULT_MAX_MOVEMENTS,
  ),
  /** Percent of settlement lines booked on the next UTC day (settlement/booking.ts). */
  SANDBOX_SETTLEMENT_LATE_PERCENT: integer(0, 100, 'an integer 0-100').default(
    DEFAULT_SETTLEMENT_TIMING.latePercent,
  ),
  /** Seed of which settlement lines are late. */
  SANDBOX_SETTLEMENT_SEED: integer(0, 0xffff_ffff, 'an integer 0-4294967295').default(
    DEFAULT_SETTLEMENT_TIMING.seed,
  ),
  /**
   * How far V8 lets the heap grow past what survived its last full collection (percent;
   * 0: V8's own factor). Like the worker's HEAP_GROWTH_PERCENT: without it a long run's
   * garbage piles up to a large part of the host's memory before V8 collects it.
   */
  SANDBOX_HEAP_GROWTH_PERCENT: integer(0, 400, 'an integer 0-400').default(50),
  SANDBOX_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      message: 'must be fatal, error, warn, info, debug, trace or silent',
    })
    .default('info'),
});
export type SandboxEnv = z.output<typeof sandboxEnvSchema>;

/** Parses the environment or returns the one-line problem. */
export function parseSandboxEnv(
  env: NodeJS.ProcessEnv,
): { ok: true; env: SandboxEnv } | { ok: false; error: string } {
  const relevant = Object.fromEntries(
    Object.keys(sandboxEnvSchema.shape).flatMap((key) =>
      env[key] === undefined || env[key] === '' ? [] : [[key, env[key]]],
    ),
  );
  const result = sandboxEnvSchema.safeParse(relevant);
  if (result.success) return { ok: true, env: result.data };
  const issue = result.error.issues[0];
  const variable = String(issue?.path[0] ?? 'environment');
  return { ok: false, error: `Invalid ${variable}: ${issue?.message ?? 'invalid value'}` };
}
