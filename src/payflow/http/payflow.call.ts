/**
 * One request as the transport (payflow.transport.ts) sees it, once the endpoint table
 * (payflow.endpoints.ts) has built it from a call's input: where it goes, its bytes, how it
 * authenticates and how its 2xx answer is consumed. Also the errors of a call that never left.
 */
import type { Dispatcher } from 'undici';
import { PayflowAbortedError, type PayflowErrorInit } from '../payflow.errors.js';
import type { PayflowSendHook } from '../payflow-send-hook.js';
import type { PayflowTraceHeaders } from '../payflow-trace.js';
import type { PayflowEndpointName } from '../payflow.types.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What the transport needs to know of an endpoint. */
export interface EndpointIdentity {
  readonly name: PayflowEndpointName;
  readonly method: HttpMethod;
  /** Retried inside the client on transient failures (GET, PUT and the token request). */
  readonly idempotent: boolean;
}

export interface Base {
  readonly origin: string;
  /** Path prefix without a trailing slash ('' or '/partner'). */
  readonly prefix: string;
}

export function parseBase(url: string, what: string): Base {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`PayflowClient: ${what} is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`PayflowClient: ${what} must be http(s)`);
  }
  return { origin: parsed.origin, prefix: parsed.pathname.replace(/\/+$/, '') };
}

/** The Authorization of one attempt. */
export interface Authorization {
  readonly header: string;
  /** Drops the credential a 401 proved dead (once per call); absent when a new one cannot help. */
  readonly renew?: () => void;
}

/** How a call authenticates: asked again before every attempt (payflow.auth.ts). */
export interface Credentials {
  authorize(call: HttpCall): Promise<Authorization>;
}

export interface HttpCall {
  readonly endpoint: EndpointIdentity;
  readonly base: Base;
  /** Path below the base, query included. */
  readonly path: string;
  /** JSON or form text, or the bytes of a multipart body. */
  readonly body?: string | Buffer;
  readonly contentType?: string;
  readonly accept: string;
  readonly organizationId?: string;
  readonly signal?: AbortSignal;
  /** Sent as `traceparent` / `tracestate` (CONTRACT §8). */
  readonly trace?: PayflowTraceHeaders;
  readonly credentials: Credentials;
  /** The caller's send hook (payflow-send-hook.ts), run just before the request leaves; never on the token's. */
  readonly onSend?: PayflowSendHook;
}

export interface AttemptContext {
  readonly attempt: number;
  readonly status: number;
  /** Init for errors raised while consuming this (2xx) response. */
  readonly errorInit: PayflowErrorInit;
}

/** Reads a 2xx answer into the call's result. */
export type Consume<T> = (response: Dispatcher.ResponseData, context: AttemptContext) => Promise<T>;

/** The caller's signal and the client's close signal as one. */
export function callSignal(call: HttpCall, closed: AbortSignal): AbortSignal {
  return call.signal ? AbortSignal.any([call.signal, closed]) : closed;
}

/** A call given up before anything of it was sent. */
export function abortedBeforeSending(
  call: HttpCall,
  reason: 'caller' | 'closed',
  cause?: unknown,
): PayflowAbortedError {
  return new PayflowAbortedError(
    { endpoint: call.endpoint.name, method: call.endpoint.method, reached: 'no', cause },
    reason,
  );
}

/** Why a wait of `call` ended: the client closed, or else its caller gave up. */
export function abortReason(closed: AbortSignal): 'caller' | 'closed' {
  return closed.aborted ? 'closed' : 'caller';
}
