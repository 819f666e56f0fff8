/**
 * `payflow_bridge_unexplained_effects_total{kind,source}`: effects at Payflow that no event
 * of their order explains, counted once each, when first recorded (an alert on its increase
 * says a person has something to check). Several parts of the worker build the check (the
 * webhook processor, the reconciliation poller, two order handlers), so the counter is taken
 * from the registry when one of them registered it already.
 */
import { Counter, type Registry } from 'prom-client';
import {
  EFFECT_KINDS,
  SIGHTING_SOURCES,
  type EffectKind,
  type SightingSource,
} from './unexplained-effects.matching.js';

export const UNEXPLAINED_EFFECTS_METRIC = 'payflow_bridge_unexplained_effects_total';

export interface UnexplainedEffectsMetrics {
  firstSeen(kind: EffectKind, source: SightingSource): void;
}

export const NO_UNEXPLAINED_EFFECTS_METRICS: UnexplainedEffectsMetrics = {
  firstSeen: () => undefined,
};

/** The counter in `registry` (registered on first use), or nothing without a registry. */
export function unexplainedEffectsMetrics(
  registry: Registry | undefined,
): UnexplainedEffectsMetrics {
  if (registry === undefined) return NO_UNEXPLAINED_EFFECTS_METRICS;
  const existing = registry.getSingleMetric(UNEXPLAINED_EFFECTS_METRIC);
  let counter: Counter<string>;
  if (existing instanceof Counter) {
    counter = existing;
  } else {
    counter = new Counter({
      name: UNEXPLAINED_EFFECTS_METRIC,
      help: 'Installments and documents at Payflow that no event of their order explains, by kind and by the read that found them (webhook, reconcile, probe)',
      labelNames: ['kind', 'source'] as const,
      registers: [registry],
    });
    // Every series from the start, so that an alert on increase() sees the first one.
    for (const kind of EFFECT_KINDS)
      for (const source of SIGHTING_SOURCES) counter.inc({ kind, source }, 0);
  }
  return { firstSeen: (kind, source) => counter.inc({ kind, source }) };
}
