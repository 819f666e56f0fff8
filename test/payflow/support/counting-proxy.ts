/**
 * A tiny HTTP proxy that records every request the client under test sends (method, path,
 * time, answer status) before forwarding it unchanged to the target. It observes the wire,
 * independently of the client's own bookkeeping: "one token request for 50 callers" is
 * counted here. An upstream reset is passed on as a reset of the client's connection.
 */
import { createServer, request as httpRequest, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  /** Path without the query. */
  readonly path: string;
  readonly at: number;
  status: number | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface CountingProxy {
  readonly url: string;
  readonly requests: RecordedRequest[];
  count(method: string, path: string | RegExp): number;
  clear(): void;
  close(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      at: Date.now(),
      status: undefined,
      headers: { ...req.headers },
    };
    requests.push(record);
    const forward = httpRequest(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
        agent,
      },
      (answer) => {
        record.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('error', () => res.socket?.destroy());
        answer.on('aborted', () => res.socket?.destroy());
      },
    );
    forward.on('error', () => req.socket.destroy());
    req.pipe(forward);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    count(method, path) {
      return requests.filter(
        (entry) =>
          entry.method === method &&
          (typeof path === 'string' ? entry.path === path : path.test(entry.path)),
      ).length;
    },
    clear() {
      requests.length = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
