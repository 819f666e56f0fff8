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
 * - BUCKET_FENCE (transaction level, taken by every batch): only one process at a time
 *   publishes from bucket n, whoever owns it. A `flush()` (or the operator CLI, or a
 *   relay of an older release) takes it exclusively: one transaction at a time. The
 *   owner's pipelined passes take it shared, and only while this process's lock
 *   connection still holds the bucket's BUCKET_OWNER lock (`fenceOwned`), so several of
 *   its passes publish from n at once (RelayPublisher keeps a key's rows apart) while no
 *   other process can; a bucket just gained is first fenced exclusively once, which waits
 *   out the passes of a previous owner that lost its lock connection without noticing.
 *   This is what keeps per-key order even when ownership is confused (a lock connection
 *   that dropped, a `flush()` from a process that owns nothing, the operator CLI).
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

  /**
   * The pipelined pass's fence: of `buckets`, those whose BUCKET_OWNER lock the session
   * `ownerPid` (this process's lock connection) holds now and whose fence this transaction
   * got: shared, or exclusive where `exclusive[i]` (a bucket just gained). One statement;
   * the owner check comes first (CASE keeps the order), so a bucket not owned is not fenced.
   */
  async fenceOwned(
    tx: Sql,
    buckets: readonly number[],
    exclusive: readonly boolean[],
    ownerPid: number,
  ): Promise<number[]> {
    if (buckets.length === 0) return [];
    const rows = await tx.query<{ bucket: number }>(
      `WITH owned AS MATERIALIZED (
         SELECT objid::int AS bucket FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND pid = $4::int
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND classid = $2::int::oid)
       SELECT f.b AS bucket FROM unnest($3::int[], $5::bool[]) AS f (b, exclusive)
        WHERE CASE WHEN f.b NOT IN (SELECT bucket FROM owned) THEN false
                   WHEN f.exclusive THEN pg_try_advisory_xact_lock($1::int, f.b)
                   ELSE pg_try_advisory_xact_lock_shared($1::int, f.b) END`,
      [
        RELAY_LOCK_NAMESPACE.BUCKET_FENCE,
        RELAY_LOCK_NAMESPACE.BUCKET_OWNER,
        buckets,
        ownerPid,
        exclusive,
      ],
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

  /** Counts the session of `client` as a running relay; returns the session's backend pid. */
  async join(client: PoolClient): Promise<number> {
    const result = await client.query<{ pid: number }>(
      'SELECT pg_advisory_lock_shared($1::int, 0), pg_backend_pid() AS pid',
      [RELAY_LOCK_NAMESPACE.MEMBERS],
    );
    const pid = result.rows[0]?.pid;
    if (pid === undefined) throw new Error('no backend pid for the relay lock connection');
    return pid;
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
