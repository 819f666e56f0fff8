/**
 * How the worker holds a Postgres connection without a lost one ending the process.
 *
 * node-postgres reports a connection that dies (Postgres restarted or failed over, the
 * session terminated: 57P01, a reset socket) as an 'error' event on its Client, often
 * twice (the 57P01, then "Connection terminated unexpectedly" when the socket ends), and an
 * 'error' event that nobody listens to is thrown: the process exits. pg-pool listens on its
 * idle clients only: it takes its listener off a client when it hands it out, and a pool
 * without a listener of its own rethrows the error of an idle client. So a connection held
 * between two statements crashes the process unless its holder listens, and so does a new
 * one that Postgres ends as it opens: a busy worker reads "ready" and the 57P01 of a
 * restart in one read, and pg emits the error right after pg-pool took its listener off,
 * before the caller's `await pool.connect()` could add one (pooled-connection.spec.ts).
 *
 * Three guards, one per depth:
 * - GuardedClient, the class every pool of the worker makes its clients with (data-source.ts):
 *   a client listens from its birth, so there is no moment (not even between pg-pool
 *   handing it out and the caller's code running) when its error is unheard. The failure
 *   still reaches the caller through the statement that fails, and pg-pool discards a client
 *   that is no longer queryable.
 * - guardPool: the pool's own listener, for idle clients, whoever opened the pool.
 * - checkOut: a connection held for exclusive use (a batch, a lock session, a one-off
 *   statement) hears its loss, is destroyed rather than pooled again when it broke, and its
 *   holder may react (the outbox relay's bucket locks go with their session).
 */
import { types } from 'node:util';
import pg from 'pg';
import { AppError, describeError } from '../errors/app-error.js';

/** Node's codes of a socket that failed or was cut (a reset is what a killed backend leaves). */
const SOCKET_ERROR_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** Errors after which the connection must not go back to the pool. */
function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  // Class 08: connection exception; 57P01..57P03: admin shutdown, crash, cannot connect.
  if (typeof code === 'string' && (/^(08|57P)/.test(code) || SOCKET_ERROR_CODES.has(code))) {
    return true;
  }
  // pg's own, without a code: the socket ended, or an earlier error left the client unusable.
  return /Connection terminated|ECONNRESET|EPIPE|not queryable/i.test(error.message);
}

/**
 * Postgres could not be reached, or the connection a statement ran on was lost (a restart,
 * a failover, the session terminated). Transient, and a wait rather than a failed try
 * (`waitsForOther`): Postgres comes back by itself, and an event that waited for it is
 * retried at the first back-off step within its duration budget, so that it goes on
 * within a second of Postgres being back instead of after a back-off grown through the
 * outage, and a long outage spends none of its attempts.
 */
export class DatabaseUnavailableError extends AppError {
  readonly code = 'DATABASE.UNAVAILABLE';
  readonly transient = true;
  override readonly waitsForOther = true;
}

/**
 * Whether `error` is the driver's (or the socket's) saying that the connection failed or
 * was lost; never one of our own errors (whose message may quote a socket error of another
 * service, e.g. Payflow's). Socket errors are made by Node itself, so they are recognized
 * whatever realm made them (isNativeError), not only by instanceof.
 */
export function isLostConnection(error: unknown): error is Error {
  return (
    (error instanceof Error || types.isNativeError(error)) &&
    !(error instanceof AppError) &&
    isConnectionError(error)
  );
}

/** `error` as callers get it: a lost or refused connection becomes DatabaseUnavailableError. */
export function unavailableOr(error: unknown): unknown {
  if (!isLostConnection(error)) return error;
  return new DatabaseUnavailableError(`Postgres is out of reach: ${describeError(error)}`, {
    cause: error,
  });
}

/** What holding a connection needs of a pool (pg.Pool fits). */
export interface PoolLike {
  connect(): Promise<pg.PoolClient>;
}

/**
 * A pg Client with an 'error' listener from its construction on. pg-pool creates its
 * clients with it when given as the pool's `Client` option.
 */
export class GuardedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    // Only keeps an unheard error from ending the process: the statement in progress (or
    // the next one) fails with it, and whoever holds the client listens too (checkOut).
    this.on('error', ignoreError);
  }
}

function ignoreError(): void {
  // See GuardedClient.
}

/** Pools that already have our listener (Database may be built several times per pool). */
const guardedPools = new WeakSet<pg.Pool>();

/**
 * Makes sure `pool` listens for the errors of its idle clients (pg-pool rethrows them
 * otherwise); `onIdleLost` hears each. Only the first call for a pool adds a listener.
 */
export function guardPool(pool: pg.Pool, onIdleLost: (error: Error) => void = ignoreError): void {
  if (guardedPools.has(pool)) return;
  guardedPools.add(pool);
  pool.on('error', (error: Error) => onIdleLost(error));
}

export interface CheckOutOptions {
  /**
   * Called once, the first time the connection is found lost while held: its 'error'
   * event, or a statement that failed with a connection error (reported through `failed`).
   */
  readonly onLost?: (error: Error) => void;
}

/** A pooled connection held for exclusive use; give it back with `release`, once. */
export interface HeldConnection {
  readonly client: pg.PoolClient;
  /** Why the connection cannot be used any more, once it cannot. */
  readonly lost: Error | undefined;
  /** Reports that a statement failed with `error`: a connection error marks it lost. */
  failed(error: unknown): void;
  /**
   * Gives the connection back to the pool, or destroys it when it was lost or `discard`
   * says so (e.g. to end its session and with it the session's advisory locks).
   */
  release(discard?: Error): void;
}

/** Checks a connection out of `pool` and listens for its loss until it is released. */
export async function checkOut(
  pool: PoolLike,
  options: CheckOutOptions = {},
): Promise<HeldConnection> {
  const client = await pool.connect();
  let lost: Error | undefined;
  let released = false;
  const markLost = (error: Error): void => {
    if (lost !== undefined || released) return;
    lost = error;
    options.onLost?.(error);
  };
  client.on('error', markLost);
  return {
    client,
    get lost() {
      return lost;
    },
    failed(error: unknown) {
      if (isLostConnection(error)) markLost(error);
    },
    release(discard?: Error) {
      if (released) return;
      released = true;
      // pg-pool puts its idle listener back on before this one comes off: never unheard.
      client.release(lost ?? discard);
      client.off('error', markLost);
    },
  };
}
