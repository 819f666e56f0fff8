/**
 * The console's overview: consumer lag, outbox backlog, calls in doubt, dead letters in
 * the last 24 h, webhooks received and refused, the last settlement night, each with a
 * small series of the last hours. What the tables date is counted per hour from them (an
 * index range each: dead_letters_failed_at_idx, webhook_inbox_received_idx); the live
 * gauges come from OverviewSampler's samples of the last six hours (one a minute).
 */
import { Inject, Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { DeadLetterRepository } from '../../dead-letters/dead-letter.repository.js';
import { SettlementRepository } from '../../settlements/settlement.repository.js';
import { WebhookInboxRepository } from '../../webhooks/inbox/webhook-inbox.repository.js';
import { nightItem, type NightItem } from '../settlements/settlement-nights.query.js';
import { OverviewSampler, type OverviewSample } from './overview-sampler.js';

export interface SeriesPoint {
  /** The start of the hour, or the sample's time (ISO 8601). */
  readonly at: string;
  readonly value: number;
}

export interface Series {
  readonly step: 'hour' | 'sample';
  readonly points: readonly SeriesPoint[];
}

export interface Overview {
  readonly at: string;
  /** When the oldest live sample was taken (null before the first). */
  readonly sampledSince: string | null;
  readonly consumerLag: { readonly value: number | null; readonly series: Series };
  readonly outboxBacklog: {
    readonly value: number | null;
    readonly oldestPendingSeconds: number | null;
    readonly series: Series;
  };
  readonly inDoubt: { readonly value: number | null; readonly series: Series };
  readonly deadLetters: { readonly last24h: number; readonly series: Series };
  readonly webhooks: {
    readonly received24h: number;
    readonly receivedSeries: Series;
    /** Refused since the samples began (null without metrics). */
    readonly refused: number | null;
    readonly refusedSeries: Series;
  };
  readonly settlements: {
    readonly lastPulled: NightItem | null;
    /** Files stored per hour (first pulls, re-pulls that changed, pulls by hand). */
    readonly filesSeries: Series;
  };
}

const HOUR_MS = 3_600_000;

/** 24 points, one an hour up to the current one, each with its count (0 when none). */
export function hourlySeries(
  rows: readonly { hour: Date; count: number }[],
  now: Date,
  hours = 24,
): Series {
  const current = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const counts = new Map(rows.map((row) => [row.hour.getTime(), row.count]));
  const points: SeriesPoint[] = [];
  for (let k = hours - 1; k >= 0; k -= 1) {
    const at = current - k * HOUR_MS;
    points.push({ at: new Date(at).toISOString(), value: counts.get(at) ?? 0 });
  }
  return { step: 'hour', points };
}

function sampled(
  samples: readonly OverviewSample[],
  value: (sample: OverviewSample) => number | null,
): Series {
  return {
    step: 'sample',
    points: samples.flatMap((sample) => {
      const v = value(sample);
      return v === null ? [] : [{ at: sample.at.toISOString(), value: v }];
    }),
  };
}

/** Per sample, what a counter grew by since the sample before (a restart counts from 0). */
function deltas(samples: readonly OverviewSample[]): Series {
  const points: SeriesPoint[] = [];
  let previous: number | null = null;
  for (const sample of samples) {
    const total = sample.webhooksRefusedTotal;
    if (total === null) continue;
    if (previous !== null) {
      points.push({ at: sample.at.toISOString(), value: Math.max(0, total - previous) });
    }
    previous = total;
  }
  return { step: 'sample', points };
}

@Injectable()
export class OverviewQuery {
  private readonly letters = new DeadLetterRepository();
  private readonly settlements = new SettlementRepository();

  constructor(
    @Inject(Database) private readonly database: Pick<Database, 'sql'>,
    @Inject(OverviewSampler) private readonly sampler: OverviewSampler,
  ) {}

  async overview(now: Date = new Date()): Promise<Overview> {
    const sql = this.database.sql;
    const since = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - 23 * HOUR_MS);
    const [letters, webhooks, files, lastPulled, current] = await Promise.all([
      this.letters.countsByHour(sql, since),
      WebhookInboxRepository.countsByHour(sql, since),
      this.settlements.filesByHour(sql, since),
      this.settlements.lastPulled(sql),
      // A fresh sample: the tiles show now, the series the minutes before.
      this.sampler.sample(now).catch(() => null),
    ]);
    const samples = this.sampler.samples.toArray();
    const refused = deltas(samples);
    const letterSeries = hourlySeries(letters, now);
    const webhookSeries = hourlySeries(webhooks, now);
    const sum = (series: Series): number =>
      series.points.reduce((total, point) => total + point.value, 0);
    return {
      at: now.toISOString(),
      sampledSince: samples[0]?.at.toISOString() ?? null,
      consumerLag: {
        value: current?.consumerLag ?? null,
        series: sampled(samples, (sample) => sample.consumerLag),
      },
      outboxBacklog: {
        value: current?.outboxBacklog ?? null,
        oldestPendingSeconds: current?.oldestPendingSeconds ?? null,
        series: sampled(samples, (sample) => sample.outboxBacklog),
      },
      inDoubt: {
        value: current?.inDoubt ?? null,
        series: sampled(samples, (sample) => sample.inDoubt),
      },
      deadLetters: { last24h: sum(letterSeries), series: letterSeries },
      webhooks: {
        received24h: sum(webhookSeries),
        receivedSeries: webhookSeries,
        refused: samples.some((sample) => sample.webhooksRefusedTotal !== null)
          ? sum(refused)
          : null,
        refusedSeries: refused,
      },
      settlements: {
        lastPulled: lastPulled === null ? null : nightItem(lastPulled),
        filesSeries: hourlySeries(files, now),
      },
    };
  }
}
