/**
 * `payflow_bridge_ready` on /metrics: 1 when `GET /health/ready` would answer 200 at the
 * moment of the scrape, 0 otherwise. It is computed only when scraped (the same check as
 * the endpoint, with its database ping), so an idle worker that nobody scrapes pays nothing
 * for it. `up` says Prometheus reached the process; this says the process can work.
 */
import { Gauge, type Registry } from 'prom-client';

export const READY_METRIC = 'payflow_bridge_ready';

export class ReadinessMetrics {
  readonly gauge: Gauge;

  constructor(registry: Registry, ready: () => Promise<boolean>) {
    this.gauge = new Gauge({
      name: READY_METRIC,
      help: '1 when /health/ready answers ready (database, order consumer, Kafka authorization), 0 otherwise; evaluated at each scrape',
      registers: [registry],
      async collect() {
        this.set((await ready()) ? 1 : 0);
      },
    });
  }
}
