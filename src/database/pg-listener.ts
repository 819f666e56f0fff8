/**
 * One Postgres LISTENing connection per process, shared by every loop that sleeps until
 * someone commits work for it (the outbox relay, the webhook inbox processor). An idle
 * worker then costs nothing: the loops wait for a NOTIFY instead of polling, and probe
 * only at a long interval as a safety net.
 *
 * The connection is a client of its own, made with the pool's connection settings, so it
 * never takes a slot of the pool the hot paths use. It is opened with the first
 * subscription and closed with the last. A connection that dies (Postgres restarted, the
 * session terminated: an 'error' event this listener always hears) is reopened with
 * back-off, 250 ms doubling to at most 2 s: the loops that sleep on it (the webhook
 * processor after a failed drain, an idle relay) wake when it is back, so it must be back
 * within a couple of seconds of Postgres, not after a back-off grown long during the
 * outage. Notifications sent meanwhile are lost, so after every reconnect each subscriber
 * is told (`onReconnect`) and looks for work itself.
 */
import pg from 'pg';
import { backoffDelay } from '../timing/backoff.js';

/** What a subscriber hears: a NOTIFY on its channel, or "you may have missed some". */
export interface ListenSubscriber {
  readonly channel: string;
  onNotify(payload: string): void;
  /** The connection was lost and is back: notifications may have been missed. */
  onReconnect?(): void;
}

/** A subscription: whether its wake-ups are heard right now, and how to end it. */
export interface ListenHandle {
  /** False while the connection is down: poll more often meanwhile. */
  readonly listening: boolean;
  close(): Promise<void>;
}

/** Postgres channel names are identifiers; ours are plain lower-case words. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Reconnection back-off: a failed attempt costs one refused connection, so retrying every
 * 2 s at most is cheap, and the listener is back at most about 2 s after Postgres is.
 */
export const LISTEN_RETRY = { initialMs: 250, maxMs: 2_000 } as const;

/**
 * A connection attempt that gets no answer (a host gone without a reset) is given up after
 * this long, so that the retries go on; the pool's own setting wins when it has one.
 */
const CONNECT_TIMEOUT_MS = 10_000;

/** The shared listener of each pool (one per process in the worker). */
const listeners = new WeakMap<pg.Pool, PgListener>();

export class PgListener {
  private readonly subscribers = new Set<ListenSubscriber>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = true;

  private constructor(private readonly connect: () => pg.Client) {}

  /** The listener shared by everything that uses `pool`. */
  static of(pool: pg.Pool): PgListener {
    let listener = listeners.get(pool);
    if (listener === undefined) {
      listener = new PgListener(() => new pg.Client(listenerOptions(pool.options)));
      listeners.set(pool, listener);
    }
    return listener;
  }

  /** Whether the connection is up and LISTENing right now. */
  get listening(): boolean {
    return this.client !== null;
  }

  /**
   * Starts delivering `subscriber`'s channel; resolves once it is LISTENed to (or, when
   * Postgres cannot be reached now, once the first attempt failed: the listener keeps
   * trying and calls `onReconnect` when it succeeds).
   */
  async subscribe(subscriber: ListenSubscriber): Promise<ListenHandle> {
    if (!CHANNEL.test(subscriber.channel)) {
      throw new Error(`not a channel name: ${subscriber.channel}`);
    }
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- read by the handle's getter
    const listener = this;
    this.subscribers.add(subscriber);
    this.closed = false;
    if (this.client !== null) {
      await this.client.query(`LISTEN ${subscriber.channel}`).catch(() => undefined);
    } else {
      await this.open();
    }
    let closed = false;
    return {
      get listening(): boolean {
        return !closed && listener.listening;
      },
      close: async () => {
        if (closed) return;
        closed = true;
        this.subscribers.delete(subscriber);
        if (this.subscribers.size === 0) await this.close();
      },
    };
  }

  private channels(): Set<string> {
    return new Set([...this.subscribers].map((subscriber) => subscriber.channel));
  }

  private open(): Promise<void> {
    this.connecting ??= this.attempt().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async attempt(): Promise<void> {
    const client = this.connect();
    client.on('notification', (message: pg.Notification) => {
      for (const subscriber of this.subscribers) {
        if (subscriber.channel === message.channel) subscriber.onNotify(message.payload ?? '');
      }
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of this.channels()) await client.query(`LISTEN ${channel}`);
    } catch {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.scheduleRetry();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    const reconnected = this.failures > 0;
    this.failures = 0;
    this.client = client;
    if (reconnected) {
      for (const subscriber of this.subscribers) subscriber.onReconnect?.();
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (!this.closed) this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer !== null) return;
    this.failures += 1;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = null;
        if (!this.closed) void this.open();
      },
      backoffDelay(this.failures, LISTEN_RETRY.initialMs, LISTEN_RETRY.maxMs),
    );
    this.retryTimer.unref();
  }

  private async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.connecting;
    const client = this.client;
    this.client = null;
    if (client === null) return;
    client.removeAllListeners('end');
    client.on('error', () => undefined);
    await client.end().catch(() => undefined);
  }
}

/**
 * The pool's connection settings for the LISTEN connection, with a connect time-out. The
 * password is copied by name: pg-pool keeps it out of the options' enumerable properties.
 */
function listenerOptions(pool: pg.PoolConfig): pg.ClientConfig {
  return {
    ...pool,
    password: pool.password,
    connectionTimeoutMillis: pool.connectionTimeoutMillis ?? CONNECT_TIMEOUT_MS,
  };
}
