/**
 * The W3C trace headers the sandbox received, so that a test (or a person) can follow one
 * trace id from an ERP event to the Payflow call it caused: GET /sandbox/request-traces
 * ?traceId=<32 hex>. Only Payflow API requests that carry a `traceparent` are kept, the
 * last 10,000 of them (a ring: the sandbox runs for hours in benchmarks, and its memory
 * must not grow with them). Nothing else of the request is kept.
 */
export interface RequestTrace {
  /** Wall-clock time of arrival (ISO 8601). */
  readonly at: string;
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  readonly traceparent: string;
  readonly tracestate?: string;
  /** The trace id inside `traceparent` (lowercase hex), for lookups. */
  readonly traceId: string;
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

export class RequestTraces {
  private readonly ring: (RequestTrace | undefined)[];
  private next = 0;

  constructor(private readonly capacity = 10_000) {
    this.ring = new Array<RequestTrace | undefined>(capacity);
  }

  /** Records the request if it carries a well-formed traceparent. */
  record(
    method: string,
    path: string,
    traceparent: string | undefined,
    tracestate: string | undefined,
  ): void {
    const match = traceparent === undefined ? null : TRACEPARENT.exec(traceparent.trim());
    const traceId = match?.[1];
    if (traceparent === undefined || traceId === undefined) return;
    this.ring[this.next] = {
      at: new Date().toISOString(),
      method,
      path,
      traceparent: traceparent.trim(),
      ...(tracestate === undefined || tracestate === '' ? {} : { tracestate }),
      traceId,
    };
    this.next = (this.next + 1) % this.capacity;
  }

  /** The requests of one trace, oldest first (all kept ones without a trace id). */
  find(traceId?: string): RequestTrace[] {
    const ordered = [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    return ordered.filter(
      (entry): entry is RequestTrace =>
        entry !== undefined && (traceId === undefined || entry.traceId === traceId.toLowerCase()),
    );
  }

  clear(): void {
    this.ring.fill(undefined);
    this.next = 0;
  }
}
