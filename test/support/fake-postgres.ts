/**
 * Just enough of the Postgres wire protocol (v3, no TLS, no password) to let node-postgres
 * connect, run simple statements (LISTEN, SELECT 1) and receive what a real server sends
 * when it ends a session: FATAL 57P01 "terminating connection due to administrator
 * command", then the socket's end. Unit specs use it to end a connection exactly when
 * they choose, which a real server makes a matter of timing; the integration test
 * test/database/postgres-restart.test.ts restarts a real one.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** One message: its type byte and its body (the length is added). */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function cstring(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'utf8');
}

/** AuthenticationOk then ReadyForQuery (idle): the connection is open. */
export function readyMessages(): Buffer {
  const auth = Buffer.alloc(4);
  auth.writeInt32BE(0, 0);
  return Buffer.concat([message('R', auth), message('Z', Buffer.from('I'))]);
}

/** An ErrorResponse; FATAL 57P01 (a fast shutdown, pg_terminate_backend) by default. */
export function errorMessage(
  code = '57P01',
  text = 'terminating connection due to administrator command',
  severity = 'FATAL',
): Buffer {
  return message(
    'E',
    Buffer.concat([
      Buffer.from('S'),
      cstring(severity),
      Buffer.from('V'),
      cstring(severity),
      Buffer.from('C'),
      cstring(code),
      Buffer.from('M'),
      cstring(text),
      Buffer.from([0]),
    ]),
  );
}

/** A NOTIFY delivered on `channel`. */
export function notificationMessage(channel: string, payload: string): Buffer {
  const pid = Buffer.alloc(4);
  pid.writeInt32BE(4242, 0);
  return message('A', Buffer.concat([pid, cstring(channel), cstring(payload)]));
}

/** The server's side of one connection. */
export interface FakeSession {
  /** Simple statements received so far ('Q' messages), in order. */
  readonly statements: readonly string[];
  write(bytes: Buffer): void;
  /** Sends FATAL 57P01 and closes the socket, as Postgres does to every session it ends. */
  terminate(): void;
}

/**
 * What the server does with a new connection once its startup message arrived: by default
 * it opens it (`readyMessages()`); a test may instead refuse it, or open it and end it in
 * the same write.
 */
export type OnStartup = (session: FakeSession) => void;

export class FakePostgres {
  readonly sessions: FakeSession[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private onStartup: OnStartup,
  ) {}

  static async start(onStartup: OnStartup = (session) => session.write(readyMessages())) {
    const fake: FakePostgres = new FakePostgres(
      createServer((socket) => fake.accept(socket)),
      onStartup,
    );
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Changes what happens to the connections that come next. */
  whenConnected(onStartup: OnStartup): void {
    this.onStartup = onStartup;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const statements: string[] = [];
    const session: FakeSession = {
      statements,
      write: (bytes) => {
        if (!socket.destroyed) socket.write(bytes);
      },
      terminate: () => {
        if (!socket.destroyed) socket.end(errorMessage());
      },
    };
    let buffered = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!started) {
          // The startup message has no type byte: length, protocol, parameters.
          if (buffered.length < 4) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          buffered = buffered.subarray(length);
          started = true;
          this.sessions.push(session);
          this.onStartup(session);
          continue;
        }
        if (buffered.length < 5) return;
        const type = String.fromCharCode(buffered[0] ?? 0);
        const length = buffered.readInt32BE(1);
        if (buffered.length < length + 1) return;
        const body = buffered.subarray(5, length + 1);
        buffered = buffered.subarray(length + 1);
        if (type === 'Q') {
          const text = body.toString('utf8').replace(/\0$/, '');
          statements.push(text);
          const tag = text.split(' ')[0]?.toUpperCase() ?? '';
          session.write(
            Buffer.concat([
              message('C', cstring(tag === 'SELECT' ? 'SELECT 0' : tag)),
              message('Z', Buffer.from('I')),
            ]),
          );
        } else if (type === 'X') {
          socket.end();
          return;
        }
      }
    });
  }
}
