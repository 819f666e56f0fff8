/**
 * TLS for tests: a self-signed certificate for localhost and 127.0.0.1 (made with
 * `selfsigned`, EC P-256 so it takes milliseconds), and a tiny HTTPS server that records
 * what it receives and answers what the test tells it to. Give the sandbox `ca` as its
 * `webhookCa` so it trusts the server.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TlsFixture } from '../../testbed/tls.js';

export { selfSignedTls, type TlsFixture } from '../../testbed/tls.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  receivedAt: number;
}

/** Decides the status of the n-th request (0-based) to a receiver. */
export type Responder = (request: ReceivedRequest, index: number) => number;

export interface HttpsReceiver {
  /** e.g. https://127.0.0.1:PORT */
  url: string;
  /** Same server, addressed by name: https://localhost:PORT */
  localhostUrl: string;
  received: ReceivedRequest[];
  respondWith(responder: Responder): void;
  close(): Promise<void>;
}

export async function startHttpsReceiver(
  tls: TlsFixture,
  responder: Responder = () => 200,
): Promise<HttpsReceiver> {
  let respond = responder;
  const received: ReceivedRequest[] = [];
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        // keep the text
      }
      const entry: ReceivedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body,
        receivedAt: Date.now(),
      };
      received.push(entry);
      response.statusCode = respond(entry, received.length - 1);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    localhostUrl: `https://localhost:${port}`,
    received,
    respondWith: (next) => {
      respond = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
