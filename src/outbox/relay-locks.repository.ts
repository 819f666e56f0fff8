/**
 * The statements relays coordinate with, apart from the outbox table: Postgres advisory
 * locks (bucket ownership, the per-transaction fence, the member count) and the NOTIFY
 * channel on which relays wake each other. Kept in one place so that the lock key space
 * and the queries on pg_locks are read together.
 */
import { Injectable } from '@nestjs/common';
import type { PoolClient, Sql } from '../database/database.js';

/**
 * Postgres advisory locks of the relay, in the two-int4 key form `(namespace, n)` so that
 * they can never collide with single-bigint keys (e.g. the test bed's template lock).
 * - BUCKET_OWNER (session level, on the relay's lock connection): "this replica owns
 *   bucket n". Lost with the session when a replica dies.
 * - BUCKET_FENCE (transaction level, taken by every batch): only one transaction at a time
 *   publishes from bucket n, whoever owns it. This is what keeps per-key order even when
 *   ownership is confused (a lock connection that dropped, a `flush()` from a process that
 *   owns nothing, the operator CLI).
 * - MEMBERS (shared, session level): one holder per running relay; their count decides
 *   each replica's fair share of the buckets.
 */
export const RELAY_LOCK_NAMESPACE = {
  BUCKET_OWNER: 0x6f627801,
  BUCKET_FENCE: 0x6f627802,
  MEMBERS: 0x6f627803,
} as const;

/** The Postgres channel on which relays (and writers without a relay) wake the relays. */
export const OUTBOX_NOTIFY_CHANNEL = 'payflow_outbox_relay';

/** NOTIFY payloads on the channel: rows were committed, or the relays' membership changed. */
export const RELAY_SIGNAL = { ROWS: '', MEMBERS: 'members' } as const;
export type RelaySignal = (typeof RELAY_SIGNAL)[keyof typeof RELAY_SIGNAL];

@Injectable()
export class RelayLockRepository {
  /**
   * Takes the transaction-level fence of each of `buckets` that no other transaction
   * holds; returns those (the others are being published elsewhere right now).
   */
  async fence(tx: Sql, buckets: readonly number[]): Promise<number[]> {
    const rows = await tx.query<{ bucket: number }>(
      `SELECT b AS bucket FROM unnest($2::int[]) AS b
        WHERE pg_try_advisory_xact_lock($1::int, b)`,
      [RELAY_LOCK_NAMESPACE.BUCKET_FENCE, buckets],
    );
    return rows.map((row) => row.bucket);
  }

  /** Relays running on this database (holders of the shared member lock). */
  async countMembers(sql: Sql): Promise<number> {
    const [row] = await sql.query<{ members: number }>(
      `SELECT count(*)::int AS members FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = $1::int::oid AND objid = 0`,
      [RELAY_LOCK_NAMESPACE.MEMBERS],
    );
    return row?.members ?? 1;
  }

  /** Buckets some relay (this one included) owns now. */
  async ownedByAnyone(sql: Sql): Promise<Set<number>> {
    const rows = await sql.query<{ bucket: number }>(
      `SELECT objid::int AS bucket FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = $1::int::oid`,
      [RELAY_LOCK_NAMESPACE.BUCKET_OWNER],
    );
    return new Set(rows.map((lock) => lock.bucket));
  }

  /** Tries to own `bucket` for the session of `sql`; true when it does now. */
  async tryOwn(sql: Sql, bucket: number): Promise<boolean> {
    const [lock] = await sql.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_lock($1::int, $2::int) AS ok',
      [RELAY_LOCK_NAMESPACE.BUCKET_OWNER, bucket],
    );
    return lock?.ok === true;
  }

  /** Gives `bucket` back (the session of `sql` owned it). */
  async disown(sql: Sql, bucket: number): Promise<void> {
    await sql.query('SELECT pg_advisory_unlock($1::int, $2::int)', [
      RELAY_LOCK_NAMESPACE.BUCKET_OWNER,
      bucket,
    ]);
  }

  /** Counts the session of `client` as a running relay. */
  async join(client: PoolClient): Promise<void> {
    await client.query('SELECT pg_advisory_lock_shared($1::int, 0)', [
      RELAY_LOCK_NAMESPACE.MEMBERS,
    ]);
  }

  /** Releases every lock of the session of `client`. */
  async leave(client: PoolClient): Promise<void> {
    await client.query('SELECT pg_advisory_unlock_all()');
  }

  /**
   * Wakes every relay LISTENing on the channel. In a transaction, the NOTIFY is delivered
   * when it commits (and not at all when it rolls back).
   */
  async notify(sql: Sql, signal: RelaySignal = RELAY_SIGNAL.ROWS): Promise<void> {
    await sql.query('SELECT pg_notify($1, $2)', [OUTBOX_NOTIFY_CHANNEL, signal]);
  }
}
