/**
 * Traces that follow one order across the ERP, Kafka, the bridge and Payflow (W3C Trace
 * Context, CONTRACT §8).
 *
 * Contexts are passed by hand, from the event's headers to the command, the Payflow call
 * and the outbox row, not through a global context manager: on Node 20 one of those turns on
 * promise hooks for every promise of the process, which cost the worker a large share of its
 * CPU per order (see payflow-send-hook.ts). So a span is started with an explicit parent,
 * and what a span gives onwards is its `context` and its `headers()`.
 *
 * With the SDK off (no OTEL_EXPORTER_OTLP_ENDPOINT, the default) spans record nothing, but
 * the trace still propagates: an event without `traceparent` starts a new trace id, and each
 * span gets a span id of its own, so the headers the bridge writes on its events and sends to
 * Payflow name the bridge's step as the parent. Such spans are not sampled (flags 00) unless
 * the ERP's were.
 */
import { randomFillSync } from 'node:crypto';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** The W3C headers as the bridge reads and writes them. */
export interface TraceHeaders {
  readonly traceparent: string;
  readonly tracestate?: string;
}

const propagator = new W3CTraceContextPropagator();

type HeaderValue = string | Buffer | readonly (string | Buffer)[] | null | undefined;

function isList(value: HeaderValue): value is readonly (string | Buffer)[] {
  return Array.isArray(value);
}

type Carrier = Readonly<Record<string, HeaderValue>>;

const getter: TextMapGetter<Carrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const exact = carrier[key];
    if (exact !== undefined) return headerText(exact);
    const found = Object.keys(carrier).find((name) => name.toLowerCase() === key);
    return found === undefined ? undefined : headerText(carrier[found]);
  },
};

const setter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

function headerText(value: HeaderValue): string | undefined {
  if (value === null || value === undefined) return undefined;
  const first: string | Buffer | undefined = isList(value) ? value[0] : value;
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : first.toString('latin1');
}

/**
 * The trace context carried by `headers` (Kafka headers, HTTP headers, an outbox row's
 * headers), or the root context when there is none or it is malformed: a bad header from
 * outside must never fail the event, it only starts a new trace.
 */
export function contextFromHeaders(headers: Carrier | undefined): Context {
  if (headers === undefined) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, headers, getter);
}

/** The headers that carry `context` onwards (none for the root context). */
export function headersOf(context: Context): TraceHeaders | undefined {
  const carrier: Record<string, string> = {};
  propagator.inject(context, carrier, setter);
  const traceparent = carrier.traceparent;
  if (traceparent === undefined) return undefined;
  return carrier.tracestate === undefined || carrier.tracestate === ''
    ? { traceparent }
    : { traceparent, tracestate: carrier.tracestate };
}

/** The trace id of `context`, if it carries one. */
export function traceIdOf(context: Context): string | undefined {
  const spanContext = trace.getSpanContext(context);
  return spanContext !== undefined && trace.isSpanContextValid(spanContext)
    ? spanContext.traceId
    : undefined;
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}/;

/**
 * The trace id of a `traceparent` header, cheaply (for log lines about a message): no
 * context is built. Undefined when the header is missing or malformed.
 */
export function traceIdOfHeader(traceparent: string | undefined): string | undefined {
  if (traceparent === undefined) return undefined;
  const id = TRACEPARENT.exec(traceparent)?.[1];
  return id === undefined || id === '00000000000000000000000000000000' ? undefined : id;
}

/** One step of the bridge: its context (to pass on), its headers (to send) and its end. */
export interface TraceSpan {
  readonly context: Context;
  readonly traceId: string;
  headers(): TraceHeaders;
  setAttributes(attributes: Attributes): void;
  /** Ends the span; an error marks it failed (its class and code only, never its message). */
  end(error?: unknown): void;
}

export type TraceSpanKind = 'internal' | 'consumer' | 'producer' | 'client' | 'server';

const KINDS: Record<TraceSpanKind, SpanKind> = {
  internal: SpanKind.INTERNAL,
  consumer: SpanKind.CONSUMER,
  producer: SpanKind.PRODUCER,
  client: SpanKind.CLIENT,
  server: SpanKind.SERVER,
};

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const { code } = error;
    if (typeof code === 'string') return code;
  }
  return error instanceof Error ? error.name : 'error';
}

class BridgeSpan implements TraceSpan {
  readonly context: Context;
  /** Made once: a command asks for them for its Payflow call and for its events. */
  private ownHeaders: TraceHeaders | undefined;

  constructor(
    private readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  headers(): TraceHeaders {
    if (this.ownHeaders !== undefined) return this.ownHeaders;
    const headers = headersOf(this.context);
    if (headers === undefined) throw new Error('a bridge span always has a valid context');
    this.ownHeaders = headers;
    return headers;
  }

  setAttributes(attributes: Attributes): void {
    this.span.setAttributes(attributes);
  }

  end(error?: unknown): void {
    if (error !== undefined) {
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode(error) });
      this.span.setAttribute('error.type', errorCode(error));
    }
    this.span.end();
  }
}

/** Starts the bridge's spans; `recording` when an SDK exports them. */
export class Tracing {
  constructor(
    private readonly tracer: Tracer | undefined,
    readonly recording: boolean,
  ) {}

  /** Spans that record nothing but still propagate (the default, and the tests'). */
  static off(): Tracing {
    return new Tracing(undefined, false);
  }

  start(
    name: string,
    parent: Context = ROOT_CONTEXT,
    options: { readonly kind?: TraceSpanKind; readonly attributes?: Attributes } = {},
  ): TraceSpan {
    if (this.tracer !== undefined && this.recording) {
      const span = this.tracer.startSpan(
        name,
        { kind: KINDS[options.kind ?? 'internal'], attributes: options.attributes ?? {} },
        parent,
      );
      return new BridgeSpan(span, parent);
    }
    return new BridgeSpan(trace.wrapSpanContext(childOf(trace.getSpanContext(parent))), parent);
  }
}

/** A new span id under `parent`'s trace, or a new trace when there is none. */
function childOf(parent: SpanContext | undefined): SpanContext {
  const valid = parent !== undefined && trace.isSpanContextValid(parent);
  return {
    traceId: valid ? parent.traceId : randomHex(16),
    spanId: randomHex(8),
    traceFlags: valid ? parent.traceFlags : TraceFlags.NONE,
    ...(valid && parent.traceState !== undefined ? { traceState: parent.traceState } : {}),
  };
}

/**
 * Random bytes for ids come from a pool refilled 4 KiB at a time: one CSPRNG call served
 * every span of ~40 orders, where a call per id (two or more spans per event) cost 2 % of
 * the worker's CPU under load.
 */
const idPool = Buffer.allocUnsafe(4096);
let idPoolOffset = idPool.length;

function randomHex(bytes: number): string {
  for (;;) {
    if (idPoolOffset + bytes > idPool.length) {
      randomFillSync(idPool);
      idPoolOffset = 0;
    }
    const start = idPoolOffset;
    idPoolOffset += bytes;
    // All zeros is the invalid id of the spec.
    for (let i = start; i < idPoolOffset; i++) {
      if (idPool[i] !== 0) return idPool.toString('hex', start, idPoolOffset);
    }
  }
}
