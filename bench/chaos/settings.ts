/**
 * The campaign's knobs, read once from the environment and checked (a bad value stops the
 * run before anything starts, naming the variable):
 *
 * - CHAOS_SEED: replays the same plan (default: a random seed, printed);
 * - CHAOS_ORDERS (10000) and CHAOS_RATE (events/s, 100) scale it;
 * - CHAOS_BUSY_LOOPS (0): that many busy-loop processes beside the run, the "loaded machine"
 *   of docs/operations.md (two of them);
 * - CHAOS_LATE_PHASE_SECONDS (20): how long the late-effect phase injects its faults;
 * - CHAOS_REQUEST_TIMEOUT (3s) and CHAOS_LATE_EFFECT_WINDOW (2m): the workers'
 *   PAYFLOW_REQUEST_TIMEOUT and PAYFLOW_LATE_EFFECT_WINDOW. The time-out is short so that
 *   the phase's 8 s latency outlasts it. The window must hold what the sandbox does: on a
 *   loaded machine (two busy loops) the sandbox applied requests more than 20 s after they
 *   left, beyond a 20 s window, and 14 follow-ups were doubled (seed 2627); with 2 minutes,
 *   none. It stays below the production default (3m) to keep the run short;
 * - CHAOS_KEEP_DB=1 keeps the database.
 */
import { randomInt } from 'node:crypto';
import { z } from 'zod';

const positive = z.coerce.number().positive();
const count = z.coerce.number().int().min(0);
/** A duration as the worker reads it: a number and a unit (ms, s, m). */
const duration = z.string().regex(/^\d+(ms|s|m)$/, { message: 'must be a duration like 3s' });

const settingsSchema = z.object({
  CHAOS_SEED: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 31)
    .optional(),
  CHAOS_ORDERS: positive.default(10_000),
  CHAOS_RATE: positive.default(100),
  CHAOS_BUSY_LOOPS: count.max(16).default(0),
  CHAOS_LATE_PHASE_SECONDS: positive.default(20),
  CHAOS_REQUEST_TIMEOUT: duration.default('3s'),
  CHAOS_LATE_EFFECT_WINDOW: duration.default('2m'),
  CHAOS_KEEP_DB: z.enum(['0', '1']).default('0'),
});

export interface ChaosSettings {
  readonly seed: number;
  readonly orders: number;
  readonly rate: number;
  readonly busyLoops: number;
  readonly latePhaseMs: number;
  readonly requestTimeout: string;
  readonly lateEffectWindow: string;
  readonly keepDatabase: boolean;
}

export function chaosSettings(env: NodeJS.ProcessEnv): ChaosSettings {
  // An empty variable counts as unset, as the worker's configuration reads it.
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = settingsSchema.safeParse(set);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid chaos setting: ${String(issue?.path[0])} ${issue?.message ?? ''}`);
  }
  const value = parsed.data;
  return {
    seed: value.CHAOS_SEED ?? randomInt(1, 2 ** 31 - 1),
    orders: value.CHAOS_ORDERS,
    rate: value.CHAOS_RATE,
    busyLoops: value.CHAOS_BUSY_LOOPS,
    latePhaseMs: value.CHAOS_LATE_PHASE_SECONDS * 1000,
    requestTimeout: value.CHAOS_REQUEST_TIMEOUT,
    lateEffectWindow: value.CHAOS_LATE_EFFECT_WINDOW,
    keepDatabase: value.CHAOS_KEEP_DB === '1',
  };
}

/** Milliseconds of a duration of this file's form (500ms, 3s, 2m). */
export function durationMs(value: string): number {
  const match = /^(\d+)(ms|s|m)$/.exec(value);
  if (match === null) throw new Error(`not a duration: ${value}`);
  const factor = { ms: 1, s: 1000, m: 60_000 }[match[2] as 'ms' | 's' | 'm'];
  return Number(match[1]) * factor;
}
