/**
 * What the command runner reports about its probes: each decision by command type and
 * outcome, and the calls held for a late effect (PAYFLOW_LATE_EFFECT_WINDOW): each hold,
 * and the time from the first hold to its decision.
 */
import type { ProbeOutcome } from './command-spec.js';

/** How a held call ended: found applied, sent again after the window, or left in doubt. */
export type LateEffectDecision = 'took_effect' | 'sent_again' | 'in_doubt';

export interface ProbeMetrics {
  probed(type: string, outcome: ProbeOutcome): void;
  /** A call was held for the first time: found not applied while its request may land. */
  lateEffectHeld(type: string): void;
  /** A held call was decided, `seconds` after it was first held. */
  lateEffectDecided(type: string, outcome: LateEffectDecision, seconds: number): void;
}

export const PROBE_METRICS = Symbol('PROBE_METRICS');
