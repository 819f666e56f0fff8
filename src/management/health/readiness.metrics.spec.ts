import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { READY_METRIC, ReadinessMetrics } from './readiness.metrics.js';

describe('ReadinessMetrics', () => {
  it('asks the readiness check at each scrape, and only then', async () => {
    const registry = new Registry();
    const answers = [true, false, true];
    let asked = 0;
    new ReadinessMetrics(registry, () => Promise.resolve(answers[asked++] ?? false));
    expect(asked).toBe(0);

    expect(await registry.metrics()).toContain(`\n${READY_METRIC} 1\n`);
    expect(await registry.metrics()).toContain(`\n${READY_METRIC} 0\n`);
    expect(await registry.metrics()).toContain(`\n${READY_METRIC} 1\n`);
    expect(asked).toBe(3);
  });
});
