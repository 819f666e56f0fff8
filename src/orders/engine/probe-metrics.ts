/** What the command runner reports about its probes: each decision by command type and outcome. */
import type { ProbeOutcome } from './command-spec.js';

export interface ProbeMetrics {
  probed(type: string, outcome: ProbeOutcome): void;
}

export const PROBE_METRICS = Symbol('PROBE_METRICS');
