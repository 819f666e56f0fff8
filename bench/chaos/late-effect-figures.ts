/**
 * What the workers did with calls whose effect could still land (PAYFLOW_LATE_EFFECT_WINDOW),
 * read two ways, neither of which the run depends on:
 *
 * - the attempt ledger: attempts held (a read found "not applied" while the window was
 *   open: `command_attempts.held_since`), by command, and how long each was held until it
 *   finished; absent (null) on a build without those columns;
 * - the workers' own metrics: every sample of GET /metrics whose name contains
 *   `late_effect`, summed over the live workers, with p50/p99 of any such histogram
 *   (from its buckets); empty on a build that exposes none. Only the processes alive at the
 *   end are read: a killed worker's counters died with it.
 */
import pg from 'pg';
import { z } from 'zod';
import { nearestRank } from '../percentile.js';

const heldRowSchema = z.object({
  command: z.string(),
  state: z.string(),
  held_ms: z.coerce.number().nullable(),
});

export interface HeldAttempts {
  readonly held: number;
  readonly byCommand: Record<string, number>;
  readonly byState: Record<string, number>;
  /** From the first "not applied" read to the attempt's end (finished ones only). */
  readonly heldMs: { readonly p50: number; readonly p99: number; readonly max: number } | null;
}

/** Attempts held for a late effect, or null when the ledger has no such columns. */
export async function readHeldAttempts(databaseUrl: string): Promise<HeldAttempts | null> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const columns = await client.query(
      `SELECT 1 FROM information_schema.columns
        WHERE table_name = 'command_attempts' AND column_name = 'held_since'`,
    );
    if (columns.rowCount === 0) return null;
    const { rows } = await client.query(
      `SELECT command, state,
              (EXTRACT(EPOCH FROM finished_at - held_since) * 1000)::bigint AS held_ms
         FROM command_attempts WHERE held_since IS NOT NULL`,
    );
    const parsed = rows.map((row) => heldRowSchema.parse(row));
    const byCommand: Record<string, number> = {};
    const byState: Record<string, number> = {};
    for (const row of parsed) {
      byCommand[row.command] = (byCommand[row.command] ?? 0) + 1;
      byState[row.state] = (byState[row.state] ?? 0) + 1;
    }
    const durations = parsed
      .flatMap((row) => (row.held_ms === null ? [] : [row.held_ms]))
      .sort((a, b) => a - b);
    return {
      held: parsed.length,
      byCommand,
      byState,
      heldMs:
        durations.length === 0
          ? null
          : {
              p50: nearestRank(durations, 0.5),
              p99: nearestRank(durations, 0.99),
              max: durations.at(-1) ?? 0,
            },
    };
  } finally {
    await client.end();
  }
}

export interface LateEffectMetrics {
  /** Every sample whose name contains `late_effect`, summed over label sets and workers. */
  readonly samples: Record<string, number>;
  /** Histograms among them: p50 and p99 (an upper bucket bound), in the metric's unit. */
  readonly histograms: Record<string, { count: number; p50: number; p99: number }>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/;

/** The `late_effect` metrics of the workers' /metrics texts (see the file comment). */
export function lateEffectMetrics(texts: readonly string[]): LateEffectMetrics {
  const samples: Record<string, number> = {};
  /** histogram → bucket bound → cumulative count */
  const buckets = new Map<string, Map<number, number>>();
  for (const text of texts) {
    for (const line of text.split('\n')) {
      const match = SAMPLE.exec(line);
      const [, name, labels, raw] = match ?? [];
      if (name === undefined || raw === undefined || !name.includes('late_effect')) continue;
      const value = Number(raw);
      if (!Number.isFinite(value)) continue;
      samples[name] = (samples[name] ?? 0) + value;
      const bound = /le="([^"]+)"/.exec(labels ?? '')?.[1];
      if (name.endsWith('_bucket') && bound !== undefined) {
        const histogram = name.slice(0, -'_bucket'.length);
        const byBound = buckets.get(histogram) ?? new Map<number, number>();
        const le = bound === '+Inf' ? Number.POSITIVE_INFINITY : Number(bound);
        byBound.set(le, (byBound.get(le) ?? 0) + value);
        buckets.set(histogram, byBound);
      }
    }
  }
  const histograms: LateEffectMetrics['histograms'] = {};
  for (const [name, byBound] of buckets) {
    const sorted = [...byBound].sort(([a], [b]) => a - b);
    const count = sorted.at(-1)?.[1] ?? 0;
    const quantile = (q: number): number =>
      sorted.find(([, cumulative]) => cumulative >= q * count)?.[0] ?? 0;
    histograms[name] = { count, p50: quantile(0.5), p99: quantile(0.99) };
  }
  return { samples, histograms };
}
