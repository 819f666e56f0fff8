/**
 * The OpenTelemetry SDK, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set (CONTRACT §8):
 * spans are batched and sent over OTLP/HTTP to `<endpoint>/v1/traces`, as the variable's
 * standard meaning says. Unset, the worker records nothing and pays nothing for it; the
 * trace headers still propagate (tracing.ts).
 *
 * The provider is not registered as the global one: the bridge hands its Tracing to whoever
 * starts spans, so no library starts spans of its own behind our back.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { Tracing } from './tracing.js';

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: unset → no SDK. */
  readonly otlpEndpoint?: string | undefined;
  /** OTEL_SERVICE_NAME, default payflow-bridge. */
  readonly serviceName?: string | undefined;
  /** Tests: export to this instead (each span as it ends). */
  readonly exporter?: SpanExporter;
}

export interface StartedTracing {
  readonly tracing: Tracing;
  /** Sends what is still buffered and stops (at shutdown). */
  shutdown(): Promise<void>;
}

/** Where OTLP/HTTP traces go for a base endpoint (the variable's standard meaning). */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

export function startTracing(settings: TracingSettings): StartedTracing {
  const exporter =
    settings.exporter ??
    (settings.otlpEndpoint === undefined || settings.otlpEndpoint === ''
      ? undefined
      : new OTLPTraceExporter({ url: tracesUrl(settings.otlpEndpoint) }));
  if (exporter === undefined) {
    return { tracing: Tracing.off(), shutdown: () => Promise.resolve() };
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName ?? 'payflow-bridge' }),
    spanProcessors: [
      settings.exporter === undefined
        ? new BatchSpanProcessor(exporter)
        : new SimpleSpanProcessor(exporter),
    ],
  });
  return {
    tracing: new Tracing(provider.getTracer('payflow-bridge'), true),
    shutdown: () => provider.shutdown(),
  };
}
