/**
 * When a partition was consumed again: the first command attempt begun (command_attempts
 * .started_at, one row per event) after a moment, for an event on that partition. The
 * partition of an event is its key's (Kafka's default partitioner: murmur2, positive, mod
 * the partition count), as the bench's producer chose it.
 */
import pg from 'pg';
import { murmur2 } from '../../src/messaging/kafka/murmur2.js';

export function partitionOfKey(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/**
 * For each partition of `partitions`: epoch ms of the first attempt begun on it after
 * `since` (and after its `notBefore`), if any yet. `partitionOfEvent` maps an event id to its partition.
 */
export async function firstAttemptsAfter(
  databaseUrl: string,
  since: number,
  partitions: readonly number[],
  partitionOfEvent: ReadonlyMap<string, number>,
  /** Per partition, a later start than `since` (when it was assigned again). */
  notBefore: ReadonlyMap<number, number> = new Map(),
): Promise<Map<number, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ event_id: string; at: number }>(
      `SELECT event_id::text AS event_id, extract(epoch FROM started_at)::float8 * 1000 AS at
         FROM command_attempts WHERE started_at > to_timestamp($1::float8 / 1000)`,
      [since],
    );
    const wanted = new Set(partitions);
    const first = new Map<number, number>();
    for (const row of rows) {
      const partition = partitionOfEvent.get(row.event_id);
      if (partition === undefined || !wanted.has(partition)) continue;
      if (row.at < (notBefore.get(partition) ?? since)) continue;
      const known = first.get(partition);
      if (known === undefined || row.at < known) first.set(partition, row.at);
    }
    return first;
  } finally {
    await client.end();
  }
}
