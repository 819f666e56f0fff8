/**
 * The Prometheus series the worker registers (the MetricsService registry with the
 * receiver's, the inbox processor's, the open findings', the readiness and the certificate
 * expiry metrics added, as the worker wires them), and the `payflow_bridge_*` series a query text names: what the dashboard's
 * and the alert rules' tests compare, so that a renamed metric fails there.
 */
import { ReadinessMetrics } from '../../src/management/health/readiness.metrics.js';
import { CertificateMetrics } from '../../src/management/metrics/certificates.metrics.js';
import { MetricsService } from '../../src/management/metrics/metrics.service.js';
import { PromFindingsMetrics } from '../../src/settlements/reconcile/findings.metrics.js';
import { PromProcessingMetrics } from '../../src/webhooks/processing/processing.metrics.js';
import { PromReceiverMetrics } from '../../src/webhooks/receiver/receiver.metrics.js';

export async function registeredSeries(): Promise<Set<string>> {
  const metrics = new MetricsService();
  new PromReceiverMetrics(metrics.registry);
  new PromProcessingMetrics(metrics.registry);
  new PromFindingsMetrics(metrics.registry, () => Promise.resolve([]));
  new ReadinessMetrics(metrics.registry, () => Promise.resolve(true));
  new CertificateMetrics(metrics.registry, [
    { certificate: 'management_tls', expiresAtSeconds: 2_000_000_000 },
  ]);
  return new Set((await metrics.registry.getMetricsAsJSON()).map((metric) => metric.name));
}

/** The series a query names, without the histogram suffixes Prometheus adds. */
export function seriesNamed(text: string): string[] {
  return [...text.matchAll(/payflow_bridge_[a-z0-9_]+/g)].map((match) =>
    match[0].replace(/_(bucket|count|sum)$/, ''),
  );
}
