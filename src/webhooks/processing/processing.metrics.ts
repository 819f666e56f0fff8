/**
 * What the webhook inbox processor reports: rows processed or deferred, and the inbox's
 * backlog (rows stored and acknowledged to Payflow but not processed yet, and the age of the
 * oldest). `PromProcessingMetrics` registers them in the application's prom-client registry
 * when there is one; the backlog is sampled by the processor at most every 30 s, so that an
 * idle worker does not query for it on every pass.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export type ProcessingOutcome = 'processed' | 'deferred';

export interface WebhookProcessingMetrics {
  processed(outcome: ProcessingOutcome, rows: number): void;
  backlog(pending: number, oldestSeconds: number): void;
}

export const WEBHOOK_PROCESSING_METRICS = Symbol('WEBHOOK_PROCESSING_METRICS');

export const NO_PROCESSING_METRICS: WebhookProcessingMetrics = {
  processed: () => undefined,
  backlog: () => undefined,
};

export class PromProcessingMetrics implements WebhookProcessingMetrics {
  private readonly rows: Counter<'outcome'>;
  private readonly pending: Gauge;
  private readonly oldest: Gauge;

  constructor(registry: Registry) {
    this.rows = new Counter({
      name: 'payflow_bridge_webhook_inbox_processed_total',
      help: 'Webhook inbox rows handled by the processor, by outcome (processed, deferred)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    this.pending = new Gauge({
      name: 'payflow_bridge_webhook_inbox_pending',
      help: 'Webhooks stored and acknowledged but not processed yet (sampled)',
      registers: [registry],
    });
    this.oldest = new Gauge({
      name: 'payflow_bridge_webhook_inbox_oldest_pending_seconds',
      help: 'Age of the oldest unprocessed webhook (0 when none; sampled)',
      registers: [registry],
    });
  }

  processed(outcome: ProcessingOutcome, rows: number): void {
    if (rows > 0) this.rows.inc({ outcome }, rows);
  }

  backlog(pending: number, oldestSeconds: number): void {
    this.pending.set(pending);
    this.oldest.set(oldestSeconds);
  }
}
