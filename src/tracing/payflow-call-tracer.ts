/**
 * The client span of each Payflow call (kind client: endpoint, method, status), for the
 * Payflow client, which knows no OpenTelemetry (src/payflow/payflow-trace.ts). With the SDK
 * off it starts nothing: the client then sends its caller's headers unchanged, so the
 * order pipeline pays no span per call.
 */
import type {
  PayflowCallSpan,
  PayflowCallTracer,
  PayflowTraceHeaders,
} from '../payflow/payflow-trace.js';
import { contextFromHeaders, type Tracing } from './tracing.js';

export function payflowCallTracer(tracing: Tracing): PayflowCallTracer {
  return {
    start(
      endpoint: string,
      method: string,
      parent: PayflowTraceHeaders | undefined,
    ): PayflowCallSpan | undefined {
      if (!tracing.recording) return undefined;
      const span = tracing.start(
        `payflow ${endpoint}`,
        contextFromHeaders(parent === undefined ? undefined : { ...parent }),
        {
          kind: 'client',
          attributes: { 'payflow.endpoint': endpoint, 'http.request.method': method },
        },
      );
      return {
        headers: span.headers(),
        end(status, error) {
          if (status !== undefined) span.setAttributes({ 'http.response.status_code': status });
          span.end(error);
        },
      };
    },
  };
}
