/**
 * deploy/prometheus/alerts.yaml is valid for Prometheus (promtool check rules), its alerts
 * fire when and as they should (promtool's unit tests in alerts.test.yaml), and every
 * `payflow_bridge_*` series it names is one the worker registers, as the dashboard's test
 * checks for the dashboard: a renamed metric fails here instead of an alert never firing.
 * promtool comes with Debian's `prometheus` package (scripts/ensure-env.sh, .ci/run).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { registeredSeries, seriesNamed } from './worker-series.js';

const ROOT = join(import.meta.dirname, '..', '..');
const RULES = join(ROOT, 'deploy', 'prometheus', 'alerts.yaml');

function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('promtool', args, { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

describe('the Prometheus alert rules', () => {
  it('pass promtool check rules', async () => {
    const run = await promtool('check', 'rules', RULES);
    expect(run).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
  });

  it("pass promtool's unit tests: quiet under the threshold, firing over it", async () => {
    const run = await promtool(
      'test',
      'rules',
      join(ROOT, 'deploy', 'prometheus', 'alerts.test.yaml'),
    );
    expect(run).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
  });

  it('name only series the worker registers', async () => {
    const registered = await registeredSeries();
    const named = new Set(seriesNamed(readFileSync(RULES, 'utf8')));
    expect(named.size).toBeGreaterThan(5);
    expect([...named].filter((name) => !registered.has(name)).sort()).toEqual([]);
  });
});
