/**
 * What the campaign makes Payflow (the sandbox) do, in phases at seeded moments of the load:
 *
 * - 30 % 5xx: 503 (Payflow did nothing: retried) and 500 (may have: a creation is in doubt);
 * - 429 with Retry-After on 30 % of the calls;
 * - 2 s of latency on every call;
 * - late effects, for CHAOS_LATE_PHASE_SECONDS (20 s), on the follow-ups whose effect a read
 *   of Payflow finds (installments/create, uploadDocument): 8 s of latency on about 30 % of
 *   them, past the workers' 3 s request time-out, so the worker gives up while the sandbox
 *   still applies the call; and a 504 answered at once on about 15 %, the call applied 4 s
 *   later (`applyDelayMs`). A worker that reads Payflow too early finds "not applied" and
 *   sends again: the verdict counts the effects doubled at Payflow (effects-verdict.ts);
 * - no fault, to the end.
 *
 * The late phase's faults are counted (GET /sandbox/faults: `applied`) before they are
 * removed; removing them leaves the late applications already answered to land.
 */
import { z } from 'zod';

export type PhaseName =
  '30 % 5xx' | '429 with Retry-After' | '2 s latency' | 'late effects' | 'no fault';

export interface Phase {
  /** Milliseconds after the load started. */
  readonly at: number;
  readonly name: PhaseName;
}

/** The follow-up calls of the late phase: their effect lands at Payflow after the answer. */
const LATE_CALLS = [
  { method: 'POST', path: '/api/payments/*/installments/create', label: 'installments/create' },
  { method: 'POST', path: '/api/payments/uploadDocument', label: 'uploadDocument' },
] as const;
export type LateCall = (typeof LATE_CALLS)[number]['label'];

export const LATE_PHASE = {
  latencyMs: 8_000,
  latencyShare: 0.3,
  applyDelayMs: 4_000,
  lateAnswerShare: 0.15,
} as const;

/** The phases at fractions of the fault window (`at`); the late phase lasts `lateMs`. */
export function planPhases(at: (fraction: number) => number, lateMs: number): Phase[] {
  const late = at(0.7);
  return [
    { at: at(0.1), name: '30 % 5xx' },
    { at: at(0.3), name: '429 with Retry-After' },
    { at: at(0.5), name: '2 s latency' },
    { at: late, name: 'late effects' },
    { at: late + lateMs, name: 'no fault' },
  ];
}

const faultViewSchema = z.object({
  id: z.string(),
  method: z.string().optional(),
  path: z.string(),
  status: z.number().optional(),
  latencyMs: z.number().optional(),
  applyDelayMs: z.number().optional(),
  applied: z.number(),
});
const faultListSchema = z.object({ faults: z.array(faultViewSchema) });

const lateStatsSchema = z.object({
  lateApplications: z.object({
    pending: z.number(),
    applied: z.number(),
    failed: z.number(),
    cancelled: z.number(),
  }),
});
export type SandboxLateApplications = z.output<typeof lateStatsSchema>['lateApplications'];

/** The sandbox's control API (no auth): JSON in, JSON out, a non-2xx answer throws. */
export class SandboxControl {
  constructor(private readonly url: string) {}

  async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.url}/sandbox${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
    const answer: unknown = await response.json();
    return answer;
  }

  async lateApplications(): Promise<SandboxLateApplications> {
    return lateStatsSchema.parse(await this.call('GET', '/stats')).lateApplications;
  }

  /** Waits until no late application is pending (or `timeoutMs` passed); what is left. */
  async waitLateApplications(timeoutMs: number): Promise<SandboxLateApplications> {
    const deadline = Date.now() + timeoutMs;
    let stats = await this.lateApplications();
    while (stats.pending > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      stats = await this.lateApplications();
    }
    return stats;
  }
}

/** How often the late phase's faults applied, per call: held by latency, answered then applied. */
export type LatePhaseCounts = Record<
  LateCall,
  { latencyHeld: number; answeredThenApplied: number }
>;

export interface LatePhaseFigures {
  /** Seconds after the load started, and how long it lasted. */
  readonly startedAtS: number | null;
  readonly seconds: number;
  readonly counts: LatePhaseCounts;
  readonly latencyHeld: number;
  readonly answeredThenApplied: number;
}

function lateFaults(): unknown[] {
  // The first matching fault that wins its draw applies: the 504 takes its share first,
  // the latency then takes its share of what is left, so about 30 % of all are delayed.
  const latencyRate = LATE_PHASE.latencyShare / (1 - LATE_PHASE.lateAnswerShare);
  return LATE_CALLS.flatMap(({ method, path }) => [
    {
      method,
      path,
      status: 504,
      applyDelayMs: LATE_PHASE.applyDelayMs,
      rate: LATE_PHASE.lateAnswerShare,
    },
    { method, path, latencyMs: LATE_PHASE.latencyMs, rate: latencyRate },
  ]);
}

async function countLateFaults(control: SandboxControl): Promise<LatePhaseCounts> {
  const { faults } = faultListSchema.parse(await control.call('GET', '/faults'));
  const counts = Object.fromEntries(
    LATE_CALLS.map(({ label }) => [label, { latencyHeld: 0, answeredThenApplied: 0 }]),
  ) as LatePhaseCounts;
  for (const fault of faults) {
    const call = LATE_CALLS.find((late) => late.path === fault.path);
    if (call === undefined) continue;
    if (fault.applyDelayMs !== undefined) counts[call.label].answeredThenApplied += fault.applied;
    else if (fault.latencyMs !== undefined) counts[call.label].latencyHeld += fault.applied;
  }
  return counts;
}

/** The moments of a run, in milliseconds since the load started. */
export interface PhaseClock {
  readonly waitUntil: (ms: number) => Promise<void>;
  readonly elapsedMs: () => number;
}

/**
 * Runs the phases in turn (`waitUntil` a phase's moment, then its faults), reporting each
 * through `onPhase` with how long setting it up took; resolves after the last one with the
 * late phase's figures. The late phase lasts its planned time from when it actually began:
 * on a loaded machine the control calls before it can be late, and a phase cut short would
 * count nothing.
 */
export async function runPhases(
  control: SandboxControl,
  phases: readonly Phase[],
  clock: PhaseClock,
  onPhase: (name: PhaseName, setUpMs: number) => void,
): Promise<LatePhaseFigures> {
  let late: { startedMs: number; plannedMs: number } | undefined;
  let lateEndedMs: number | undefined;
  let counts: LatePhaseCounts | undefined;
  for (const [index, phase] of phases.entries()) {
    const endsLate = index > 0 && phases[index - 1]?.name === 'late effects';
    await clock.waitUntil(
      endsLate && late !== undefined
        ? Math.max(phase.at, late.startedMs + late.plannedMs)
        : phase.at,
    );
    const setUpFrom = clock.elapsedMs();
    if (endsLate) {
      counts = await countLateFaults(control);
      lateEndedMs = clock.elapsedMs();
    }
    await control.call('DELETE', '/faults');
    switch (phase.name) {
      case '30 % 5xx':
        await control.call('POST', '/faults', { path: '/**', status: 503, rate: 0.25 });
        await control.call('POST', '/faults', { path: '/**', status: 500, rate: 0.067 });
        break;
      case '429 with Retry-After':
        await control.call('POST', '/faults', {
          path: '/**',
          status: 429,
          rate: 0.3,
          retryAfterSeconds: 2,
        });
        break;
      case '2 s latency':
        await control.call('POST', '/faults', { path: '/**', latencyMs: 2_000 });
        break;
      case 'late effects':
        for (const fault of lateFaults()) await control.call('POST', '/faults', fault);
        late = {
          startedMs: clock.elapsedMs(),
          plannedMs: (phases[index + 1]?.at ?? phase.at) - phase.at,
        };
        break;
      case 'no fault':
        break;
    }
    onPhase(phase.name, clock.elapsedMs() - setUpFrom);
  }
  const finalCounts = counts ?? (await countLateFaults(control));
  const values = Object.values(finalCounts);
  return {
    startedAtS: late === undefined ? null : Math.round(late.startedMs / 1000),
    seconds:
      late === undefined || lateEndedMs === undefined
        ? 0
        : Math.round((lateEndedMs - late.startedMs) / 1000),
    counts: finalCounts,
    latencyHeld: values.reduce((sum, count) => sum + count.latencyHeld, 0),
    answeredThenApplied: values.reduce((sum, count) => sum + count.answeredThenApplied, 0),
  };
}
