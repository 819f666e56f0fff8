/**
 * Fault injection on the Payflow surface (never on /sandbox/*). A fault matches a method
 * (optional) and a path pattern, where `*` is one path segment (or part of one) and `**`
 * any number of segments, against the request path including the `/partner` prefix. The
 * first matching fault whose `rate` draw succeeds applies: it waits `latencyMs`, then
 * answers `status` (429 with `Retry-After`) or resets the connection, before the real
 * handler runs or, with `afterProcessing`, after it ran (the answer is lost, the effect
 * stays), or, with `applyDelayMs`, answers `status` at once and runs the real handler that
 * much later (a gateway that gave up while the server behind it went on: the effect lands
 * after the answer). `times` applies it N times, then it is removed.
 */
import { z } from 'zod';
import { newObjectId } from '../state/ids.js';

/** The longest wait a fault may add (latencyMs, applyDelayMs): two minutes. */
export const MAX_FAULT_DELAY_MS = 120_000;

const delayMs = z.number().int().min(0).max(MAX_FAULT_DELAY_MS);

export const faultSpecSchema = z
  .object({
    method: z
      .string()
      .regex(/^[A-Za-z]+$/, { message: 'must be an HTTP method' })
      .transform((value) => value.toUpperCase())
      .optional(),
    path: z.string().startsWith('/', { message: 'must start with /' }),
    status: z.number().int().min(100).max(599).optional(),
    latencyMs: delayMs.optional(),
    rate: z.number().min(0).max(1).optional(),
    retryAfterSeconds: z.number().int().min(0).optional(),
    times: z.number().int().min(1).optional(),
    reset: z.boolean().optional(),
    afterProcessing: z.boolean().optional(),
    applyDelayMs: delayMs.optional(),
  })
  .refine(
    (spec) => spec.status !== undefined || spec.latencyMs !== undefined || spec.reset === true,
    { message: 'give status, latencyMs or reset', path: ['status'] },
  )
  // A late application needs an answer to come first: without `status` nothing would tell
  // the client anything before the effect, and `reset` or `afterProcessing` already decide
  // when the handler runs.
  .refine((spec) => spec.applyDelayMs === undefined || spec.status !== undefined, {
    message: 'applyDelayMs needs status: the fault answers status at once, the handler runs later',
    path: ['applyDelayMs'],
    params: { type: 'value_error.apply_delay_needs_status' },
  })
  .refine(
    (spec) =>
      spec.applyDelayMs === undefined || (spec.reset !== true && spec.afterProcessing !== true),
    {
      message: 'applyDelayMs cannot go with reset or afterProcessing',
      path: ['applyDelayMs'],
      params: { type: 'value_error.apply_delay_conflict' },
    },
  );
export type FaultSpec = z.output<typeof faultSpecSchema>;

export interface Fault extends FaultSpec {
  id: string;
  remaining: number | null;
  applied: number;
  pattern: RegExp;
}

export class FaultRegistry {
  private faults: Fault[] = [];

  get size(): number {
    return this.faults.length;
  }

  add(spec: FaultSpec): Fault {
    const fault: Fault = {
      ...spec,
      id: newObjectId(),
      remaining: spec.times ?? null,
      applied: 0,
      pattern: compilePathPattern(spec.path),
    };
    this.faults.push(fault);
    return fault;
  }

  remove(id: string): boolean {
    const before = this.faults.length;
    this.faults = this.faults.filter((fault) => fault.id !== id);
    return this.faults.length < before;
  }

  clear(): void {
    this.faults = [];
  }

  list(): Fault[] {
    return [...this.faults];
  }

  /** The fault to apply to this request, if any (counting it against `times`). */
  take(method: string, path: string): Fault | undefined {
    for (const fault of this.faults) {
      if (fault.method !== undefined && fault.method !== method) continue;
      if (!fault.pattern.test(path)) continue;
      if (fault.rate !== undefined && Math.random() >= fault.rate) continue;
      fault.applied++;
      if (fault.remaining !== null && --fault.remaining <= 0) this.remove(fault.id);
      return fault;
    }
    return undefined;
  }
}

/** `/api/payments/*` → one segment; `/partner/**` → anything below /partner (or /partner itself). */
export function compilePathPattern(pattern: string): RegExp {
  const segments = pattern.replace(/^\/+|\/+$/g, '').split('/');
  let source = '^';
  for (const segment of segments) {
    if (segment === '**') source += '(?:/[^/]*)*';
    else if (segment === '*') source += '/[^/]+';
    else if (segment !== '') source += `/${segment.split('*').map(escapeRegExp).join('[^/]*')}`;
  }
  return new RegExp(`${source}/?$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function faultView(fault: Fault) {
  const { pattern: _pattern, ...view } = fault;
  return view;
}
