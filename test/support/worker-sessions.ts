/**
 * What a worker holds open in Postgres, read from the server's side (pg_stat_activity and
 * pg_locks): its LISTEN connection, the outbox relay's lock connection (the holder of the
 * relays' shared member lock), the pooled connections that sit idle and those that are busy
 * (in a statement or a transaction, or waiting for a lock). A test that cuts every session
 * (a Postgres restart) checks with it that each kind was really held at that moment, and
 * that the long-lived ones come back afterwards.
 */
import pg from 'pg';
import { RELAY_LOCK_NAMESPACE } from '../../src/outbox/relay-locks.repository.js';

/** The application_name the worker's connections carry (src/database/data-source.ts). */
const WORKER_APPLICATION = 'payflow-bridge';

export interface WorkerSessions {
  /** The LISTEN connection (its last statement was a LISTEN). */
  readonly listening: number;
  /** Sessions holding the relays' member lock: the relay's lock connection. */
  readonly relayLock: number;
  /** Pooled sessions with nothing to do. */
  readonly idle: number;
  /** Sessions in a statement or an open transaction. */
  readonly busy: number;
  /** Of the busy ones, those waiting for a lock. */
  readonly waitingForLock: number;
}

interface SessionRow {
  readonly state: string | null;
  readonly wait_event_type: string | null;
  readonly query: string | null;
  readonly relay_member: boolean;
}

/** The worker's sessions on the database of `client`, by kind. */
export async function workerSessions(client: pg.Client): Promise<WorkerSessions> {
  const { rows } = await client.query<SessionRow>(
    `SELECT a.state, a.wait_event_type, a.query,
            EXISTS (SELECT 1 FROM pg_locks l
                     WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted
                       AND l.classid = $1::int::oid AND l.objid = 0 AND l.objsubid = 2)
              AS relay_member
       FROM pg_stat_activity a
      WHERE a.datname = current_database() AND a.application_name = $2
        AND a.pid <> pg_backend_pid()`,
    [RELAY_LOCK_NAMESPACE.MEMBERS, WORKER_APPLICATION],
  );
  let listening = 0;
  let relayLock = 0;
  let idle = 0;
  let busy = 0;
  let waitingForLock = 0;
  for (const row of rows) {
    if (row.relay_member) relayLock += 1;
    else if ((row.query ?? '').startsWith('LISTEN ')) listening += 1;
    else if (row.state === 'idle') idle += 1;
    else busy += 1;
    if (row.wait_event_type === 'Lock') waitingForLock += 1;
  }
  return { listening, relayLock, idle, busy, waitingForLock };
}

/**
 * A session of the test's own on `databaseUrl`, for reading workerSessions and for holding
 * a lock: it listens for its own 'error' event, since the restart under test ends it too.
 */
export async function observerSession(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'pfb-test' });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/**
 * Reads workerSessions on a fresh observer session until `wanted` holds; retries while the
 * server is still coming up. Resolves with the sessions seen, or rejects after `timeoutMs`.
 */
export async function waitForSessions(
  databaseUrl: string,
  wanted: (sessions: WorkerSessions) => boolean,
  timeoutMs: number,
): Promise<WorkerSessions> {
  const deadline = Date.now() + timeoutMs;
  let last: WorkerSessions | undefined;
  for (;;) {
    let client: pg.Client | undefined;
    try {
      client = await observerSession(databaseUrl);
      last = await workerSessions(client);
      if (wanted(last)) return last;
    } catch {
      // The server is not accepting connections yet: ask again.
    } finally {
      await client?.end().catch(() => undefined);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `the worker's sessions did not come to the expected state within ${timeoutMs} ms; ` +
          `last seen: ${JSON.stringify(last ?? 'none')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A kind of long-lived session of the worker that a test can end on its own. */
export type HeldSession = 'listening' | 'relayLock';

/**
 * Ends the worker's session of `kind` with pg_terminate_backend (the session fails with
 * 57P01, as in a fast shutdown, while the server stays up); returns how many were ended.
 */
export async function terminateWorkerSession(
  client: pg.Client,
  kind: HeldSession,
): Promise<number> {
  const { rows } = await client.query<{ ended: boolean }>(
    `SELECT pg_terminate_backend(a.pid) AS ended
       FROM pg_stat_activity a
      WHERE a.datname = current_database() AND a.application_name = $2
        AND a.pid <> pg_backend_pid()
        AND EXISTS (SELECT 1 FROM pg_locks l
                     WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted
                       AND l.classid = $1::int::oid AND l.objid = 0 AND l.objsubid = 2) = $3
        AND ($3 OR a.query LIKE 'LISTEN %')`,
    [RELAY_LOCK_NAMESPACE.MEMBERS, WORKER_APPLICATION, kind === 'relayLock'],
  );
  return rows.filter((row) => row.ended).length;
}
