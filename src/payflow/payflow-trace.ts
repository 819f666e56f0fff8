/**
 * W3C trace context on Payflow calls (CONTRACT §8): the headers a call carries, and the
 * tracer that records one client span per call when an SDK is on.
 *
 * The client knows nothing of OpenTelemetry (src/payflow sits below src/tracing): it is
 * given plain headers and, optionally, a `PayflowCallTracer` (src/tracing provides one).
 * The headers travel in the call's options (`CallOptions.trace`), like the send hook.
 */

/** `traceparent` and, when there is one, `tracestate`: sent as HTTP headers. */
export interface PayflowTraceHeaders {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** The span of one Payflow call: the headers it sends, and its end. */
export interface PayflowCallSpan {
  readonly headers: PayflowTraceHeaders;
  /** `status`: Payflow's HTTP status, when an answer came; `error`: the call's failure. */
  end(status: number | undefined, error?: unknown): void;
}

/** Starts the span of a call; undefined when nothing is recorded (the client then sends the parent's headers). */
export interface PayflowCallTracer {
  start(
    endpoint: string,
    method: string,
    parent: PayflowTraceHeaders | undefined,
  ): PayflowCallSpan | undefined;
}

/** Nest token of the tracer (provided by src/tracing's TracingModule). */
export const PAYFLOW_CALL_TRACER = Symbol('PAYFLOW_CALL_TRACER');
