/**
 * One HTTP exchange with Payflow over the undici pool: send, read the status, consume a 2xx
 * or turn anything else into a PayflowError, and report it (one debug line, the onCall hook).
 *
 * Whether a failed request may have reached Payflow is decided here, from two facts:
 * undici's `sendHeaders` diagnostics channel says when a request head was handed to the
 * socket (matched by our x-request-id), and a body gated by the caller's send hook
 * (gatedBody) says whether the hook let the request go at all.
 */
import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { Agent } from 'undici';
import type { AppLogger } from '../../logging/logger.js';
import { abortedBeforeSending, type Consume, type HttpCall } from './payflow.call.js';
import { errorForStatus, errorForTransport, parseRetryAfter } from './payflow.error-mapping.js';
import { PayflowError } from '../payflow.errors.js';
import type { PayflowCallEvent } from '../payflow.types.js';

/** Largest error body read (the rest is discarded). */
const ERROR_BODY_LIMIT = 64 * 1024;
const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID_IN_HEAD = /\r\nx-request-id: ([0-9a-f-]{36})\r\n/i;
const SEND_HEADERS_CHANNEL = 'undici:client:sendHeaders';

export interface ExchangeSettings {
  readonly connections: number;
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly userAgent: string;
  readonly logger: AppLogger;
  readonly onCall: ((event: PayflowCallEvent) => void) | undefined;
  /** A 429 came (called before its error is thrown). */
  readonly onRateLimited: (retryAfterMs: number | undefined) => void;
}

class DeadlineExceeded extends Error {
  constructor() {
    super('Payflow request deadline exceeded');
    this.name = 'DeadlineExceeded';
  }
}

interface BodyGate {
  /** none: not gated; waiting: the hook runs; passed: the body is written; failed: refused. */
  state: 'none' | 'waiting' | 'passed' | 'failed';
  failure: unknown;
}

export class HttpExchange {
  readonly agent: Agent;
  /** Requests in flight by request id: whether their head was handed to the socket. */
  private readonly sent = new Map<string, { sent: boolean }>();

  constructor(private readonly settings: ExchangeSettings) {
    this.agent = new Agent({
      connections: settings.connections,
      connectTimeout: settings.connectTimeoutMs,
      headersTimeout: settings.requestTimeoutMs,
      bodyTimeout: settings.requestTimeoutMs,
      keepAliveTimeout: settings.keepAliveTimeoutMs,
      pipelining: 1,
    });
    subscribe(SEND_HEADERS_CHANNEL, this.onSendHeaders);
  }

  /** Stops watching request heads (the pool itself is closed by the transport). */
  stopWatching(): void {
    unsubscribe(SEND_HEADERS_CHANNEL, this.onSendHeaders);
  }

  /** One HTTP exchange: send, read the status, consume a 2xx or turn anything else into an error. */
  async send<T>(
    call: HttpCall,
    authorization: string,
    attempt: number,
    consume: Consume<T>,
  ): Promise<T> {
    const { endpoint: def } = call;
    const requestId = randomUUID();
    const tracker = { sent: false };
    this.sent.set(requestId, tracker);
    // One controller for the deadline and the caller's signal (cheaper than AbortSignal.any,
    // which this hot path would call for every request).
    const controller = new AbortController();
    let deadlineExceeded = false;
    const timer = setTimeout(() => {
      deadlineExceeded = true;
      controller.abort(new DeadlineExceeded());
    }, this.settings.requestTimeoutMs);
    const caller = call.signal;
    const onCallerAbort = (): void => controller.abort(caller?.reason);
    if (caller?.aborted === true) controller.abort(caller.reason);
    else caller?.addEventListener('abort', onCallerAbort, { once: true });
    const signal = controller.signal;
    const headers = this.headersOf(call, authorization, requestId);
    const gate: BodyGate = { state: 'none', failure: undefined };
    const body = this.bodyOf(call, headers, gate, signal);

    const started = performance.now();
    let status: number | undefined;
    let outcome = 'ok';
    try {
      const response = await this.agent.request({
        origin: call.base.origin,
        path: `${call.base.prefix}${call.path}`,
        method: def.method,
        headers,
        body,
        signal,
        headersTimeout: this.settings.requestTimeoutMs,
        bodyTimeout: this.settings.requestTimeoutMs,
      });
      status = response.statusCode;
      if (status >= 200 && status < 300) {
        return await consume(response, {
          attempt,
          status,
          errorInit: { endpoint: def.name, method: def.method, status, reached: 'yes', attempt },
        });
      }
      const text = await readLimited(response.body, ERROR_BODY_LIMIT);
      const retryAfterMs = parseRetryAfter(response.headers['retry-after'], Date.now());
      if (status === 429) this.settings.onRateLimited(retryAfterMs);
      throw errorForStatus({
        endpoint: def.name,
        method: def.method,
        status,
        body: parseJsonOrUndefined(text),
        retryAfterMs,
        attempt,
      });
    } catch (error) {
      if (gate.state === 'failed') {
        // The hook refused: the body (the whole request, see gatedBody) was never written.
        const notSent = abortedBeforeSending(call, 'caller', gate.failure);
        outcome = notSent.code;
        throw notSent;
      }
      // undici announces the head before a stream body is read; while the hook still ran
      // (a deadline or the caller aborted meanwhile) nothing of the request was written.
      const written = gate.state === 'none' || gate.state === 'passed' ? tracker.sent : false;
      const failure =
        error instanceof PayflowError
          ? error
          : errorForTransport(error, {
              endpoint: def.name,
              method: def.method,
              requestSent: written,
              status,
              abortedBy: deadlineExceeded
                ? 'deadline'
                : call.signal?.aborted
                  ? 'caller'
                  : undefined,
              attempt,
            });
      outcome = failure.code;
      throw failure;
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
      this.sent.delete(requestId);
      this.report({
        endpoint: def.name,
        method: def.method,
        status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        attempt,
        outcome,
      });
    }
  }

  private headersOf(
    call: HttpCall,
    authorization: string,
    requestId: string,
  ): Record<string, string> {
    const headers: Record<string, string> = {
      authorization,
      accept: call.accept,
      'user-agent': this.settings.userAgent,
      [REQUEST_ID_HEADER]: requestId,
    };
    if (call.contentType !== undefined) headers['content-type'] = call.contentType;
    if (call.organizationId !== undefined) headers['x-organization-id'] = call.organizationId;
    if (call.trace !== undefined) {
      headers.traceparent = call.trace.traceparent;
      if (call.trace.tracestate !== undefined) headers.tracestate = call.trace.tracestate;
    }
    return headers;
  }

  /** The body as sent: gated by the caller's send hook when there is one (sets content-length). */
  private bodyOf(
    call: HttpCall,
    headers: Record<string, string>,
    gate: BodyGate,
    signal: AbortSignal,
  ): string | Buffer | Readable | null {
    const hook = call.onSend;
    if (hook === undefined || call.body === undefined) return call.body ?? null;
    const bytes = typeof call.body === 'string' ? Buffer.from(call.body, 'utf8') : call.body;
    headers['content-length'] = String(bytes.length);
    gate.state = 'waiting';
    return Readable.from(gatedBody(bytes, hook, gate, signal), { objectMode: false });
  }

  private report(event: PayflowCallEvent): void {
    const { logger, onCall } = this.settings;
    if (logger.isLevelEnabled('debug')) {
      logger.debug(
        {
          endpoint: event.endpoint,
          method: event.method,
          status: event.status,
          durationMs: event.durationMs,
          attempt: event.attempt,
          outcome: event.outcome,
        },
        'payflow call',
      );
    }
    if (onCall === undefined) return;
    try {
      onCall(event);
    } catch (error) {
      logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'payflow onCall hook threw',
      );
    }
  }

  /** undici publishes each request head just before writing it to the socket. */
  private readonly onSendHeaders = (message: unknown): void => {
    if (this.sent.size === 0) return;
    const head = (message as { headers?: unknown } | null)?.headers;
    if (typeof head !== 'string') return;
    const id = REQUEST_ID_IN_HEAD.exec(head)?.[1];
    if (id === undefined) return;
    const tracker = this.sent.get(id.toLowerCase());
    if (tracker !== undefined) tracker.sent = true;
  };
}

/**
 * A request body that runs the send hook first. undici asks for it once the request has its
 * connection and writes the request head together with the first chunk, so the hook's commit
 * (`sent_at`) and the write are one chain of microtasks apart: a crash between them, which
 * would leave a call "sent" that never left, is nearly impossible. When the hook fails the
 * body throws, undici destroys the socket, and nothing of the request was written.
 */
async function* gatedBody(
  bytes: Buffer,
  hook: () => Promise<void>,
  gate: BodyGate,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  try {
    await hook();
  } catch (error) {
    gate.state = 'failed';
    gate.failure = error ?? new Error('send hook failed');
    throw gate.failure;
  }
  // Aborted (deadline, caller) while the hook ran: undici has already given the request up,
  // and nothing may be written. Checked right before the chunk goes out, with no wait between.
  if (signal.aborted) return;
  gate.state = 'passed';
  yield bytes;
}

async function readLimited(body: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    if (size + buffer.length > limit) {
      chunks.push(buffer.subarray(0, limit - size));
      body.destroy();
      break;
    }
    chunks.push(buffer);
    size += buffer.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The JSON of a body, or undefined when it is empty or not JSON. */
export function parseJsonOrUndefined(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
