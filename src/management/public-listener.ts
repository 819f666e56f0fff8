/**
 * The public listener (HTTP_PORT, HTTPS with TLS_CERT_FILE/TLS_KEY_FILE): what Payflow
 * reaches from the internet. It serves the webhook receiver's routes and nothing else, and
 * holds out against slow and greedy clients:
 *
 * - Headers not complete within HTTP_HEADERS_TIMEOUT, or the whole request not received
 *   within HTTP_REQUEST_TIMEOUT (a client that trickles them): a bare 408 and the connection
 *   closes. Node's own timers, checked every `checkIntervalMs`. A TLS handshake gets as long
 *   as the headers; one that fails or times out is closed, without an answer.
 * - At most HTTP_MAX_CONNECTIONS_PER_ADDRESS connections open at once per client (an IPv4
 *   address, an IPv6 /64): the next ones are reset as they arrive, before TLS, and counted.
 * - A body over the limit: 413 from the Content-Length alone, or as soon as a chunked body
 *   passes the limit, and the connection closes (fastify). Any answer sent before the
 *   request was read whole closes the connection too, so that Node never reads and discards
 *   the rest of a body nobody wants.
 * - An unknown path or method is answered at once, before any body is read, exactly as the
 *   receiver answers an unknown webhook address (404 `not_found`): the answer is the same
 *   for every path and method and names nothing that runs here. Errors of the HTTP parser
 *   (malformed request, headers too large, time-outs) get a bare status line. Refused
 *   connections and cut-off clients are counted (PublicListenerMetrics).
 * - A route without the management constraint (listener-constraint.ts) must lie under one
 *   of `routePrefixes` (the receiver's), or the worker refuses to start.
 */
import { readFileSync } from 'node:fs';
import {
  STATUS_CODES,
  createServer as createHttpServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { AppConfig } from '../config/app-config.js';
import { WebhookRejection } from '../webhooks/receiver/receive-webhook.errors.js';
import { WEBHOOK_ROUTE_PREFIX } from '../webhooks/receiver/webhook-receiver.controller.js';
import { ConnectionLimiter } from './connection-limiter.js';
import { isManagementRequest, isManagementRoute } from './listener-constraint.js';

/** Longest body the public listener reads (fastify's bodyLimit): webhooks are small. */
export const PUBLIC_BODY_LIMIT_BYTES = 256 * 1024;

/**
 * Idle keep-alive connections stay open this long: fastify's default, above the 60 s after
 * which common load balancers drop theirs (so that they, not we, close first).
 */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** How long a cut-off client gets to take its bare answer before the connection is destroyed. */
const ANSWER_GRACE_MS = 1_000;

export interface PublicListenerOptions {
  readonly tls: { readonly cert: Buffer; readonly key: Buffer } | null;
  /** 0: no limit. */
  readonly headersTimeoutMs: number;
  /** 0: no limit. */
  readonly requestTimeoutMs: number;
  readonly maxConnectionsPerAddress: number;
  /** The only URL prefixes public routes may have. */
  readonly routePrefixes: readonly string[];
}

export function publicListenerOptions(config: AppConfig): PublicListenerOptions {
  return {
    tls:
      config.TLS_CERT_FILE !== undefined && config.TLS_KEY_FILE !== undefined
        ? { cert: readFileSync(config.TLS_CERT_FILE), key: readFileSync(config.TLS_KEY_FILE) }
        : null,
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT,
    maxConnectionsPerAddress: config.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
    routePrefixes: [WEBHOOK_ROUTE_PREFIX],
  };
}

/** Why the HTTP parser gave up on a client before a request reached the application. */
export type ClientErrorReason =
  'timeout' | 'headers_too_large' | 'closed_early' | 'malformed' | 'tls_handshake';

/** What the public listener reports (MetricsService implements it). */
export interface PublicListenerMetrics {
  connectionRefused(): void;
  clientError(reason: ClientErrorReason): void;
}

const NO_METRICS: PublicListenerMetrics = {
  connectionRefused: () => undefined,
  clientError: () => undefined,
};

/** A route the application registered that the public listener must not serve. */
export class PublicRouteError extends AppError {
  readonly code = 'HTTP.ROUTE_NOT_ALLOWED_ON_PUBLIC_PORT';
  readonly transient = false;

  constructor(method: string, url: string, prefixes: readonly string[]) {
    super(
      `${method} ${url} would be served on the public port (HTTP_PORT), which serves only ` +
        `${prefixes.join(', ')}; mark its controller @ServedOnManagementPort()`,
      { metadata: { method, url } },
    );
  }
}

export class PublicListener {
  private readonly limiter: ConnectionLimiter;
  private metrics: PublicListenerMetrics = NO_METRICS;

  constructor(private readonly options: PublicListenerOptions) {
    this.limiter = new ConnectionLimiter(options.maxConnectionsPerAddress);
  }

  get tls(): boolean {
    return this.options.tls !== null;
  }

  /** FastifyAdapter options: the server fastify listens with, and its answer to bad clients. */
  serverOptions(): Pick<FastifyServerOptions, 'serverFactory' | 'clientErrorHandler'> {
    return {
      serverFactory: (handler) => this.createServer(handler),
      clientErrorHandler: (error, socket) => this.answerClientError(error, socket),
    };
  }

  /**
   * The public listener's hooks on the application's fastify instance; before the
   * application registers its routes (NestFactory.create, app.listen).
   */
  installHooks(fastify: FastifyInstance): void {
    const prefixes = this.options.routePrefixes;
    fastify.addHook('onRoute', (route) => {
      if (isManagementRoute(route.constraints)) return;
      if (!prefixes.some((prefix) => route.url.startsWith(prefix))) {
        const method = Array.isArray(route.method) ? route.method.join(',') : route.method;
        throw new PublicRouteError(method, route.url, prefixes);
      }
    });
    fastify.addHook('onRequest', (request, reply, done) => {
      if (request.is404 && !isManagementRequest(request.raw)) {
        answerNotFound(reply);
        return;
      }
      done();
    });
    fastify.addHook('onSend', (request, reply, payload, done) => {
      if (hasUnreadBody(request.raw) && !isManagementRequest(request.raw)) {
        reply.header('connection', 'close');
      }
      done(null, payload);
    });
  }

  /** Where refused connections and cut-off clients are counted; set before listening. */
  reportTo(metrics: PublicListenerMetrics): void {
    this.metrics = metrics;
  }

  private createServer(handler: RequestListener): Server {
    const { headersTimeoutMs, requestTimeoutMs } = this.options;
    const headersTimeout = effectiveHeadersTimeout(headersTimeoutMs, requestTimeoutMs);
    const options: ServerOptions = {
      headersTimeout,
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: checkIntervalMs(headersTimeout, requestTimeoutMs),
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    };
    const tls = this.options.tls;
    const server =
      tls === null
        ? createHttpServer(options, handler)
        : (createHttpsServer(
            {
              ...options,
              cert: tls.cert,
              key: tls.key,
              ...(headersTimeout > 0 ? { handshakeTimeout: headersTimeout } : {}),
            },
            handler,
          ) as unknown as Server);
    // For https, `connection` is the TCP socket, before the TLS handshake.
    server.on('connection', (socket: Socket) => this.admit(socket));
    return server;
  }

  private admit(socket: Socket): void {
    const address = socket.remoteAddress;
    if (address === undefined) return; // already closed
    if (!this.limiter.tryAdmit(address)) {
      this.metrics.connectionRefused();
      socket.resetAndDestroy();
      return;
    }
    socket.once('close', () => this.limiter.release(address));
  }

  private answerClientError(error: Error & { code?: string }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, reason } = clientErrorAnswer(error.code);
    this.metrics.clientError(reason);
    if (status === null || !socket.writable) {
      socket.destroy();
      return;
    }
    // Ended rather than written and destroyed at once, which over TLS loses the answer; and
    // destroyed after a grace in case the client does not take it.
    const grace = setTimeout(() => socket.destroy(), ANSWER_GRACE_MS);
    grace.unref();
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
      () => {
        clearTimeout(grace);
        socket.destroy();
      },
    );
  }
}

/**
 * Whether the request announced a body (a Content-Length above 0, or chunked) that has not
 * been received whole. A request without one is complete with its headers, whatever Node's
 * `complete` says before its parser has caught up.
 */
export function hasUnreadBody(request: IncomingMessage): boolean {
  if (request.complete) return false;
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  );
}

/** The receiver's answer to an address it does not serve, with the same headers. */
function answerNotFound(reply: FastifyReply): void {
  const rejection = WebhookRejection.notFound();
  void reply
    .code(rejection.status)
    .headers({ ...rejection.headers, 'cache-control': 'no-store' })
    .type('application/json; charset=utf-8')
    .send(rejection.body);
}

/** Node wants the headers' time-out within the request's (which covers the headers too). */
export function effectiveHeadersTimeout(
  headersTimeoutMs: number,
  requestTimeoutMs: number,
): number {
  if (requestTimeoutMs > 0 && (headersTimeoutMs === 0 || headersTimeoutMs > requestTimeoutMs)) {
    return requestTimeoutMs;
  }
  return headersTimeoutMs;
}

/**
 * How often Node looks for requests past their time-outs (its default, 30 s, would let a
 * 10 s time-out run to 40 s): a tenth of the shorter time-out, between 100 ms and 1 s.
 */
export function checkIntervalMs(headersTimeoutMs: number, requestTimeoutMs: number): number {
  const timeouts = [headersTimeoutMs, requestTimeoutMs].filter((timeout) => timeout > 0);
  if (timeouts.length === 0) return 1_000;
  return Math.min(1_000, Math.max(100, Math.floor(Math.min(...timeouts) / 10)));
}

/**
 * The bare status line for an error of Node's HTTP parser, and how it is counted; no status
 * for a TLS handshake that failed or timed out (HTTPS: `tlsClientError`), where there is no
 * HTTP to answer in.
 */
export function clientErrorAnswer(code: string | undefined): {
  status: number | null;
  reason: ClientErrorReason;
} {
  if (code !== undefined && /^ERR_(TLS|SSL)_/.test(code)) {
    return { status: null, reason: 'tls_handshake' };
  }
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'timeout' };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'headers_too_large' };
    case 'HPE_INVALID_EOF_STATE':
      return { status: 400, reason: 'closed_early' };
    case undefined:
    default:
      return { status: 400, reason: 'malformed' };
  }
}
