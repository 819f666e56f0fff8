/**
 * docs/grafana/payflow-bridge.dashboard.json charts only series the worker exposes: every
 * `payflow_bridge_*` name in its queries is registered by the worker's metrics (the
 * MetricsService registry with the receiver's, the inbox processor's and the open
 * reconciliation findings' metrics added, as the worker wires them). A renamed metric
 * fails here instead of leaving a panel empty.
 * Its scrape note sends Prometheus to the management port, where /metrics is served.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { registeredSeries, seriesNamed } from './worker-series.js';

const ROOT = join(import.meta.dirname, '..', '..');

interface Panel {
  readonly title: string;
  readonly targets: readonly { readonly expr: string }[];
  readonly datasource: { readonly uid: string };
}

const dashboard = JSON.parse(
  readFileSync(join(ROOT, 'docs', 'grafana', 'payflow-bridge.dashboard.json'), 'utf8'),
) as { readonly uid: string; readonly description: string; readonly panels: readonly Panel[] };

describe('the Grafana dashboard', () => {
  it('charts only series the worker registers', async () => {
    const registered = await registeredSeries();
    const charted = new Set(
      dashboard.panels.flatMap((panel) =>
        panel.targets.flatMap((target) => seriesNamed(target.expr)),
      ),
    );
    expect(charted.size).toBeGreaterThan(15);
    expect([...charted].filter((name) => !registered.has(name)).sort()).toEqual([]);
  });

  it('has a title and at least one query per panel, on the chosen data source', () => {
    expect(dashboard.uid).toBe('payflow-bridge');
    for (const panel of dashboard.panels) {
      expect(panel.title).not.toBe('');
      expect(panel.targets.length).toBeGreaterThan(0);
      expect(panel.datasource.uid).toBe('${datasource}');
    }
  });

  it('says to scrape /metrics on the management port, not the public one', () => {
    expect(dashboard.description).toContain('MANAGEMENT_PORT');
    expect(dashboard.description).toContain(':9464/metrics');
    expect(dashboard.description).not.toMatch(/HTTP_PORT[^,;)]*\/metrics/);
  });
});
