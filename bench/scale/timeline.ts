/**
 * A worker's group timeline from its log file (pino JSON lines): when it saw the group
 * rebalance (kafkajs "The group is rebalancing, re-joining"), when its assignment changed
 * (and to what), when it started consuming. Times are the lines' own `time` (epoch ms).
 */
import { readFileSync } from 'node:fs';

export interface TimelineEntry {
  readonly at: number;
  readonly kind: 'consuming' | 'rebalancing' | 'assignment' | 'stopping' | 'other';
  readonly msg: string;
  /** The partitions held after an `assignment`. */
  readonly assigned?: readonly number[];
}

export function readTimeline(file: string): TimelineEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const entries: TimelineEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let parsed: { time?: unknown; msg?: unknown; assigned?: unknown };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      continue;
    }
    if (typeof parsed.time !== 'number' || typeof parsed.msg !== 'string') continue;
    const msg = parsed.msg;
    const kind: TimelineEntry['kind'] =
      msg === 'order events: consuming'
        ? 'consuming'
        : msg.startsWith('The group is rebalancing')
          ? 'rebalancing'
          : msg === 'order events: partition assignment changed'
            ? 'assignment'
            : msg.startsWith('order events: stopping')
              ? 'stopping'
              : 'other';
    if (kind === 'other') continue;
    entries.push({
      at: parsed.time,
      kind,
      msg,
      ...(kind === 'assignment' && Array.isArray(parsed.assigned)
        ? { assigned: parsed.assigned.map(Number) }
        : {}),
    });
  }
  return entries;
}

/** The first entry of `kind` at or after `since`, or undefined. */
export function firstAfter(
  entries: readonly TimelineEntry[],
  kind: TimelineEntry['kind'],
  since: number,
  where: (entry: TimelineEntry) => boolean = () => true,
): TimelineEntry | undefined {
  return entries.find((entry) => entry.kind === kind && entry.at >= since && where(entry));
}
