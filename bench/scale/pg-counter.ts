/**
 * A counting TCP proxy in front of Postgres: the workers' DATABASE_URL points at it, and it
 * counts what they ask of the server (pg_stat_statements needs shared_preload_libraries,
 * which this host's server lacks). It reads only the frontend protocol's message headers
 * (a type byte and a length), never their contents:
 *
 * - `statements`: Execute ('E', extended protocol) plus Query ('Q', simple protocol; one
 *   Query may hold several statements, node-postgres sends one);
 * - `roundTrips`: Sync ('S') plus Query: each is one wait for the server's ReadyForQuery;
 * - `connections` opened, and the most open at once.
 *
 * SSL is refused by the server or not asked for (loopback, no DATABASE_SSL): the stream
 * stays readable. A connection that asks for SSL is passed through uncounted.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface PgCounts {
  readonly statements: number;
  readonly roundTrips: number;
  readonly connections: number;
  readonly peakConnections: number;
  readonly openConnections: number;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Splits one client's byte stream into frontend messages and counts their types. */
class FrontendParser {
  private buffered: Buffer = Buffer.alloc(0);
  private startup = true;
  private blind = false;

  constructor(private readonly onMessage: (type: number) => void) {}

  push(chunk: Buffer): void {
    if (this.blind) return;
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (this.startup) {
        if (this.buffered.length < 8) return;
        const length = this.buffered.readInt32BE(0);
        if (this.buffered.length < length) return;
        const code = this.buffered.readInt32BE(4);
        this.buffered = this.buffered.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          // The answer decides whether the rest is readable: assume the worst.
          this.blind = true;
          return;
        }
        this.startup = false;
        continue;
      }
      if (this.buffered.length < 5) return;
      const length = this.buffered.readInt32BE(1);
      if (this.buffered.length < length + 1) return;
      this.onMessage(this.buffered[0] as number);
      this.buffered = this.buffered.subarray(length + 1);
    }
  }
}

export class PgCounter {
  private statements = 0;
  private roundTrips = 0;
  private connections = 0;
  private open = 0;
  private peak = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a free loopback port and forwards to `target` (host:port). */
  static async start(target: { host: string; port: number }): Promise<PgCounter> {
    const accepted: { counter?: PgCounter } = {};
    const server = createServer((client) => accepted.counter?.accept(client, target));
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
    accepted.counter = new PgCounter(server, port);
    return accepted.counter;
  }

  /** The counts so far. */
  counts(): PgCounts {
    return {
      statements: this.statements,
      roundTrips: this.roundTrips,
      connections: this.connections,
      peakConnections: this.peak,
      openConnections: this.open,
    };
  }

  /** Starts a new peak (the open connections stay counted). */
  resetPeak(): void {
    this.peak = this.open;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    this.connections++;
    this.open++;
    if (this.open > this.peak) this.peak = this.open;
    const upstream = createConnection(target);
    this.sockets.add(client);
    this.sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const parser = new FrontendParser((type) => {
      // 'E' Execute, 'Q' Query, 'S' Sync.
      if (type === 0x45) this.statements++;
      else if (type === 0x51) {
        this.statements++;
        this.roundTrips++;
      } else if (type === 0x53) this.roundTrips++;
    });
    client.on('data', (chunk: Buffer) => parser.push(chunk));
    client.pipe(upstream);
    upstream.pipe(client);
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      this.open--;
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('close', close);
    upstream.on('close', close);
    client.on('error', close);
    upstream.on('error', close);
  }
}
