/**
 * A scriptable HTTP server standing in for Payflow where the sandbox cannot produce a
 * situation on demand: a connection dropped at an exact point, a body that is not JSON,
 * a response that streams slowly. Each route is a function of the request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** The body's bytes as received (for binary bodies such as multipart uploads). */
  readonly rawBody: Buffer;
}

export type FakeHandler = (
  request: FakeRequest,
  res: ServerResponse,
  socket: Socket,
) => void | Promise<void>;

export interface FakePayflow {
  readonly url: string;
  readonly requests: FakeRequest[];
  /** Routes by "METHOD /path" (the query is not part of the key). */
  readonly routes: Map<string, FakeHandler>;
  count(method: string, path: string): number;
  close(): Promise<void>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

/** A token endpoint that issues t1, t2, … with the given lifetime. */
export function tokenRoute(expiresIn = 3600): FakeHandler {
  let n = 0;
  return (_request, res) => {
    n += 1;
    sendJson(res, 200, {
      access_token: `token-${n}`,
      token_type: 'Bearer',
      expires_in: expiresIn,
      scope: 'organization:payflow:read',
    });
  };
}

export async function startFakePayflow(): Promise<FakePayflow> {
  const requests: FakeRequest[] = [];
  const routes = new Map<string, FakeHandler>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const rawBody = Buffer.concat(chunks);
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: rawBody.toString('utf8'),
        rawBody,
      };
      requests.push(request);
      const handler = routes.get(`${request.method} ${request.path}`);
      if (!handler) {
        sendJson(res, 404, { code: 'not_found', message: 'no route' });
        return;
      }
      Promise.resolve(handler(request, res, req.socket)).catch(() => req.socket.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    routes,
    count: (method, path) =>
      requests.filter((entry) => entry.method === method && entry.path === path).length,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
