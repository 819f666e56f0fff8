/**
 * The overview's live gauges, sampled once a minute into a ring buffer of six hours:
 * consumer lag and webhooks refused from the application's prom-client registry (what
 * MetricsService and the webhook receiver report; absent without metrics), the outbox
 * backlog and the calls in doubt from their tables. These have no history in a table (a
 * backlog or a lag is a level, not an event), so the series starts when the process did.
 * Counts per hour of what the tables date (dead letters, webhooks, settlement files) are
 * read from the tables instead (OverviewQuery).
 */
import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Registry } from 'prom-client';
import { Database } from '../../database/database.js';
import { CommandAttemptRepository } from '../../orders/engine/attempts/command-attempt.repository.js';
import { OutboxRepository } from '../../outbox/outbox.repository.js';
import { RingBuffer } from './ring-buffer.js';

export interface OverviewSample {
  readonly at: Date;
  /** Messages behind, summed over the order topic's partitions; null without metrics. */
  readonly consumerLag: number | null;
  readonly outboxBacklog: number;
  readonly oldestPendingSeconds: number | null;
  readonly inDoubt: number;
  /** Webhook requests refused since the process started (401, 400, 429); null without metrics. */
  readonly webhooksRefusedTotal: number | null;
}

export interface OverviewSamplerOptions {
  /** Between two samples. Default one minute. */
  readonly intervalMs?: number;
  /** Samples kept. Default 360 (six hours of one a minute). */
  readonly capacity?: number;
}

export const OVERVIEW_SAMPLER_OPTIONS = Symbol('OVERVIEW_SAMPLER_OPTIONS');

export const LAG_METRIC = 'payflow_bridge_order_events_partition_lag';
export const WEBHOOKS_METRIC = 'payflow_bridge_webhooks_received_total';
/** The receiver's outcomes that refuse a webhook (ReceiveOutcome). */
export const REFUSED_OUTCOMES: readonly string[] = ['unauthorized', 'rejected', 'rate_limited'];

@Injectable()
export class OverviewSampler implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly samples: RingBuffer<OverviewSample>;
  private readonly intervalMs: number;
  private readonly outbox = new OutboxRepository();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<OverviewSample> | undefined;

  constructor(
    @Inject(Database) private readonly database: Pick<Database, 'sql'>,
    @Optional() @Inject(Registry) private readonly registry?: Registry,
    @Optional() @Inject(OVERVIEW_SAMPLER_OPTIONS) options?: OverviewSamplerOptions,
  ) {
    this.intervalMs = options?.intervalMs ?? 60_000;
    this.samples = new RingBuffer(options?.capacity ?? 360);
  }

  onApplicationBootstrap(): void {
    void this.sampleQuietly();
    this.timer = setInterval(() => void this.sampleQuietly(), this.intervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Takes a sample now and keeps it (one at a time: a slow database is not piled on). */
  sample(now: Date = new Date()): Promise<OverviewSample> {
    this.running ??= this.read(now).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async sampleQuietly(): Promise<void> {
    try {
      await this.sample();
    } catch {
      // The database is away for a moment: this minute has no sample, the next one will.
    }
  }

  private async read(now: Date): Promise<OverviewSample> {
    const [outbox, inDoubt, consumerLag, refused] = await Promise.all([
      this.outbox.pendingStats(this.database.sql),
      CommandAttemptRepository.listInDoubt(this.database.sql),
      this.metricSum(LAG_METRIC),
      this.metricSum(WEBHOOKS_METRIC, (labels) =>
        REFUSED_OUTCOMES.includes(String(labels.outcome)),
      ),
    ]);
    const sample: OverviewSample = {
      at: now,
      consumerLag,
      outboxBacklog: outbox.count,
      oldestPendingSeconds: outbox.oldestAgeSeconds,
      inDoubt: inDoubt.length,
      webhooksRefusedTotal: refused,
    };
    this.samples.push(sample);
    return sample;
  }

  /** The sum of a metric's values (those `labels` accepts); null when it is not registered. */
  private async metricSum(
    name: string,
    accept: (labels: Record<string, string | number | undefined>) => boolean = () => true,
  ): Promise<number | null> {
    const metric = this.registry?.getSingleMetric(name);
    if (metric === undefined) return null;
    const { values } = await metric.get();
    return values
      .filter((value) => accept(value.labels))
      .reduce((sum, value) => sum + (Number.isFinite(value.value) ? value.value : 0), 0);
  }
}
