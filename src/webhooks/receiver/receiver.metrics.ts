/**
 * What the receiver reports: every answered webhook request by kind and outcome, and the
 * time from the request's arrival to the answer. `PromReceiverMetrics` registers them in
 * the application's prom-client registry (MetricsService) when there is one.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

export type ReceiveOutcome =
  'accepted' | 'duplicate' | 'unauthorized' | 'rejected' | 'rate_limited' | 'failed';

/** A kind from the URL, or `unknown` (bounded label values). */
export type KindLabel = 'payment-update' | 'status-update' | 'terminal-failure' | 'unknown';

export interface WebhookReceiverMetrics {
  received(kind: KindLabel, outcome: ReceiveOutcome, ackSeconds: number): void;
}

export const WEBHOOK_RECEIVER_METRICS = Symbol('WEBHOOK_RECEIVER_METRICS');

export const NO_RECEIVER_METRICS: WebhookReceiverMetrics = { received: () => undefined };

export class PromReceiverMetrics implements WebhookReceiverMetrics {
  private readonly counter: Counter<'kind' | 'outcome'>;
  private readonly latency: Histogram<'outcome'>;

  constructor(registry: Registry) {
    this.counter = new Counter({
      name: 'payflow_bridge_webhooks_received_total',
      help: 'Webhook requests answered, by kind and outcome',
      labelNames: ['kind', 'outcome'] as const,
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'payflow_bridge_webhook_ack_seconds',
      help: 'Time from a webhook request’s arrival to its answer (stored before a 2xx)',
      labelNames: ['outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    });
  }

  received(kind: KindLabel, outcome: ReceiveOutcome, ackSeconds: number): void {
    this.counter.inc({ kind, outcome });
    this.latency.observe({ outcome }, ackSeconds);
  }
}
