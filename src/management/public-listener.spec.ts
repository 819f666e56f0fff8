import { afterEach, describe, expect, it } from '@jest/globals';
import type { IncomingMessage, RequestListener, Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import fastify, { type FastifyInstance } from 'fastify';
import { LISTENER_CONSTRAINT, MANAGEMENT, listenerConstraint } from './listener-constraint.js';
import {
  PublicListener,
  PublicRouteError,
  checkIntervalMs,
  clientErrorAnswer,
  effectiveHeadersTimeout,
  hasUnreadBody,
  type ClientErrorReason,
  type PublicListenerOptions,
} from './public-listener.js';

const OPTIONS: PublicListenerOptions = {
  tls: null,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxConnectionsPerAddress: 2,
  routePrefixes: ['/webhooks/payflow/'],
};

const opened: { close(): unknown }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((each) => each.close()));
});

function app(options: PublicListenerOptions = OPTIONS): FastifyInstance {
  const instance = fastify({
    routerOptions: { constraints: { [LISTENER_CONSTRAINT]: listenerConstraint } },
  });
  new PublicListener(options).installHooks(instance);
  opened.push(instance);
  return instance;
}

describe('the public listener’s time-outs', () => {
  // The configured (headers, request) time-outs, 0 for none → the headers' time-out the
  // server gets (kept within the request's, which covers the headers too) and how often it
  // looks for late requests (a tenth of the shorter time-out, between 100 ms and 1 s).
  it.each([
    [10_000, 30_000, 10_000, 1_000],
    [45_000, 30_000, 30_000, 1_000],
    [0, 30_000, 30_000, 1_000],
    [10_000, 0, 10_000, 1_000],
    [0, 0, 0, 1_000],
    [5_000, 30_000, 5_000, 500],
    [500, 2_000, 500, 100],
    [0, 3_000, 3_000, 300],
  ])(
    'time-outs (%i, %i): headers within %i ms, late requests looked for every %i ms',
    (headers, request, effective, interval) => {
      expect(effectiveHeadersTimeout(headers, request)).toBe(effective);
      expect(checkIntervalMs(headers, request)).toBe(interval);
    },
  );

  it('gives the server those time-outs, and fastify’s keep-alive', () => {
    const listener = new PublicListener({ ...OPTIONS, headersTimeoutMs: 40_000 });
    const handler: RequestListener = (_request, response) => response.end();
    const server = listener.serverOptions().serverFactory?.(handler, {}) as Server;
    expect({
      headersTimeout: server.headersTimeout,
      requestTimeout: server.requestTimeout,
      keepAliveTimeout: server.keepAliveTimeout,
    }).toEqual({ headersTimeout: 30_000, requestTimeout: 30_000, keepAliveTimeout: 72_000 });
  });
});

describe('the public listener’s answers', () => {
  it.each<[string | undefined, number | null, ClientErrorReason]>([
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'timeout'],
    ['HPE_HEADER_OVERFLOW', 431, 'headers_too_large'],
    ['HPE_INVALID_EOF_STATE', 400, 'closed_early'],
    ['HPE_INVALID_METHOD', 400, 'malformed'],
    [undefined, 400, 'malformed'],
    ['ERR_TLS_HANDSHAKE_TIMEOUT', null, 'tls_handshake'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', null, 'tls_handshake'],
  ])('answers a client error %s with a bare %p (%s)', (code, status, reason) => {
    expect(clientErrorAnswer(code)).toEqual({ status, reason });
  });

  it('closes the connection only when an announced body was not read whole', () => {
    const request = (complete: boolean, headers: Record<string, string>) =>
      ({ complete, headers }) as unknown as IncomingMessage;
    expect(hasUnreadBody(request(false, {}))).toBe(false);
    expect(hasUnreadBody(request(false, { 'content-length': '0' }))).toBe(false);
    expect(hasUnreadBody(request(false, { 'content-length': '12' }))).toBe(true);
    expect(hasUnreadBody(request(false, { 'transfer-encoding': 'chunked' }))).toBe(true);
    expect(hasUnreadBody(request(true, { 'content-length': '12' }))).toBe(false);
  });

  it('answers an unknown path or method as the receiver answers an unknown address', async () => {
    const instance = app();
    instance.post('/webhooks/payflow/:token/:kind', () => ({ status: 'accepted' }));
    const base = await instance.listen({ port: 0, host: '127.0.0.1' });
    for (const [method, path] of [
      ['GET', '/metrics'],
      ['POST', '/'],
      ['GET', '/webhooks/payflow/a/b'],
    ] as const) {
      const answer = await fetch(`${base}${path}`, {
        method,
        ...(method === 'POST'
          ? { body: '{}', headers: { 'content-type': 'application/json' } }
          : {}),
      });
      expect({ method, path, status: answer.status, body: await answer.json() }).toEqual({
        method,
        path,
        status: 404,
        body: { code: 'not_found', message: 'not found' },
      });
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
    const served = await fetch(`${base}/webhooks/payflow/a/b`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(served.status).toBe(200);
  });

  it('refuses to register a public route outside the receiver’s prefix', () => {
    const instance = app();
    expect(() => instance.get('/metrics', () => 'metrics')).toThrow(PublicRouteError);
    expect(() => instance.get('/webhooks', () => 'no')).toThrow(/GET \/webhooks would be served/);
    expect(() =>
      instance.get(
        '/metrics-too',
        { constraints: { [LISTENER_CONSTRAINT]: MANAGEMENT } },
        () => 'ok',
      ),
    ).not.toThrow();
    expect(() => instance.post('/webhooks/payflow/:token/:kind', () => 'ok')).not.toThrow();
  });
});

describe('the per-address connection limit', () => {
  it('resets the connections of an address beyond the limit and counts them', async () => {
    const refused: string[] = [];
    const listener = new PublicListener(OPTIONS);
    listener.reportTo({
      connectionRefused: () => refused.push('refused'),
      clientError: () => undefined,
    });
    const server = listener
      .serverOptions()
      .serverFactory?.((_request, response) => response.end(), {}) as Server;
    opened.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    /** A connection; resolves with its end (what the server sent, the error seen). */
    const open = () => {
      const socket = connect({ port, host: '127.0.0.1' });
      opened.push({ close: () => socket.destroy() });
      let received = '';
      let error: string | undefined;
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      socket.on('error', (failure: NodeJS.ErrnoException) => (error = failure.code));
      const ended = new Promise<{ received: string; error: string | undefined }>((resolve) =>
        socket.once('close', () => resolve({ received, error })),
      );
      return { socket, ended };
    };
    // Two connections the server admitted: each gets an answer and stays open.
    const held = [open(), open()];
    for (const { socket } of held) {
      const answered = new Promise((resolve) => socket.once('data', resolve));
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered;
    }
    // The third is reset on arrival, without a byte.
    expect(await open().ended).toEqual({ received: '', error: 'ECONNRESET' });
    expect(refused).toEqual(['refused']);
  });
});
