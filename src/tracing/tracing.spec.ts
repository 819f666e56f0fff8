import { ROOT_CONTEXT } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { contextFromHeaders, headersOf, traceIdOf, Tracing } from './tracing.js';
import { startTracing, tracesUrl } from './tracing.setup.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const ERP_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${ERP_SPAN}-01`;

describe('trace headers', () => {
  it('reads traceparent and tracestate from headers of any case and either type', () => {
    const context = contextFromHeaders({
      TraceParent: Buffer.from(TRACEPARENT),
      tracestate: 'erp=1',
    });
    expect(traceIdOf(context)).toBe(TRACE_ID);
    expect(headersOf(context)).toEqual({ traceparent: TRACEPARENT, tracestate: 'erp=1' });
  });

  it('treats a missing or malformed traceparent as no trace, never as an error', () => {
    for (const headers of [
      undefined,
      {},
      { traceparent: 'garbage' },
      { traceparent: `00-${'0'.repeat(32)}-${ERP_SPAN}-01` },
      { traceparent: undefined },
    ]) {
      const context = contextFromHeaders(headers);
      expect(traceIdOf(context)).toBeUndefined();
      expect(headersOf(context)).toBeUndefined();
    }
  });
});

describe('Tracing off (the default)', () => {
  const tracing = Tracing.off();

  it('continues the ERP trace with a span id of its own', () => {
    const span = tracing.start('order handle', contextFromHeaders({ traceparent: TRACEPARENT }));
    expect(span.traceId).toBe(TRACE_ID);
    const [version, traceId, spanId, flags] = span.headers().traceparent.split('-');
    expect([version, traceId, flags]).toEqual(['00', TRACE_ID, '01']);
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(spanId).not.toBe(ERP_SPAN);
    span.end();
  });

  it('starts a new, unsampled trace when the event carries none', () => {
    const first = tracing.start('order handle');
    const second = tracing.start('order handle', ROOT_CONTEXT);
    expect(first.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(first.traceId).not.toBe(second.traceId);
    expect(first.headers().traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  });

  it('gives a child the trace of its parent span', () => {
    const parent = tracing.start('order handle');
    const child = tracing.start('payflow call', parent.context);
    expect(child.traceId).toBe(parent.traceId);
    expect(child.headers().traceparent).not.toBe(parent.headers().traceparent);
  });
});

describe('Tracing on (an SDK exporting spans)', () => {
  it('records spans under the ERP parent, with their kind, attributes and failure code', async () => {
    const exporter = new InMemorySpanExporter();
    const started = startTracing({ exporter });
    expect(started.tracing.recording).toBe(true);
    const handle = started.tracing.start(
      'order handle',
      contextFromHeaders({ traceparent: TRACEPARENT }),
      { kind: 'consumer', attributes: { 'payflow_bridge.event_type': 'order.payment_requested' } },
    );
    const call = started.tracing.start('payflow call', handle.context, { kind: 'client' });
    call.end(Object.assign(new Error('secret detail'), { code: 'PAYFLOW.SERVER_ERROR' }));
    handle.end();
    // Read before shutdown: the in-memory exporter forgets its spans when shut down.
    const spans = exporter.getFinishedSpans();
    await started.shutdown();
    expect(spans.map((span) => span.name)).toEqual(['payflow call', 'order handle']);
    const [callSpan, handleSpan] = spans;
    expect(handleSpan?.spanContext().traceId).toBe(TRACE_ID);
    expect(handleSpan?.parentSpanContext?.spanId).toBe(ERP_SPAN);
    expect(callSpan?.parentSpanContext?.spanId).toBe(handleSpan?.spanContext().spanId);
    expect(handleSpan?.attributes['payflow_bridge.event_type']).toBe('order.payment_requested');
    expect(callSpan?.status).toEqual({ code: 2, message: 'PAYFLOW.SERVER_ERROR' });
    expect(JSON.stringify(callSpan?.attributes)).not.toContain('secret detail');
  });

  it('is off without an endpoint, and sends to <endpoint>/v1/traces with one', () => {
    expect(startTracing({}).tracing.recording).toBe(false);
    expect(startTracing({ otlpEndpoint: '' }).tracing.recording).toBe(false);
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
  });
});

describe('ids of spans that record nothing', () => {
  it('are valid and distinct, across refills of the random pool', () => {
    const tracing = Tracing.off();
    const traceIds = new Set<string>();
    const spanIds = new Set<string>();
    // 1,000 new traces draw 24,000 bytes: the 4 KiB pool is refilled several times.
    for (let i = 0; i < 1_000; i++) {
      const span = tracing.start('consume');
      const [, traceId, spanId] = span.headers().traceparent.split('-');
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(traceId).not.toMatch(/^0+$/);
      traceIds.add(traceId ?? '');
      spanIds.add(spanId ?? '');
    }
    expect(traceIds.size).toBe(1_000);
    expect(spanIds.size).toBe(1_000);
  });
});
