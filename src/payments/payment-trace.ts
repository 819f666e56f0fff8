/**
 * The W3C trace headers a payment keeps from its creation (payments.trace_headers, jsonb),
 * so that its webhooks, hours later and on any replica, continue the trace of the order
 * event that created it (CONTRACT §8). Read leniently: a stored value of another shape is
 * no trace, never a failed row.
 */
import { z } from 'zod';

export interface StoredTraceHeaders {
  readonly traceparent: string;
  readonly tracestate?: string;
}

export const storedTraceHeaders = z
  .object({ traceparent: z.string(), tracestate: z.string().optional() })
  .transform((headers): StoredTraceHeaders =>
    headers.tracestate === undefined
      ? { traceparent: headers.traceparent }
      : { traceparent: headers.traceparent, tracestate: headers.tracestate },
  )
  .nullable()
  .catch(null);

/** The value bound for a jsonb parameter: JSON text, or null. */
export function jsonOrNull(headers: StoredTraceHeaders | null): string | null {
  return headers === null ? null : JSON.stringify(headers);
}
