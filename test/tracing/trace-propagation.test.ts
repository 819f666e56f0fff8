/**
 * One trace id from an ERP event's `traceparent` header to the `payment.created` status
 * event's header and to the trace headers the Payflow sandbox received (CONTRACT §8), on
 * the real test bed (Kafka, Postgres, the sandbox over HTTP, the worker as main.ts starts
 * it): first with the SDK off (the default: the trace propagates, nothing is recorded),
 * then with an SDK exporting to memory, where the recorded spans must form one trace.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import pg from 'pg';
import { startTracing, type StartedTracing } from '../../src/tracing/tracing.setup.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import {
  startPipeline,
  TopicReader,
  type ConsumedMessage,
  type Pipeline,
} from '../support/pipeline.js';

interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly traceparent: string | null;
  readonly traceId: string | null;
}

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const parts = (traceparent: string | undefined) => {
  const [, traceId, parentId] = (traceparent ?? '').split('-');
  return { traceId, parentId };
};

async function publishWithHeaders(
  pipeline: Pipeline,
  orderId: string,
  headers: Record<string, string>,
): Promise<void> {
  const envelope = anEnvelope('order.payment_requested', paymentRequestedData(), { orderId });
  await pipeline.producer.send({
    topic: pipeline.topics.orders,
    messages: [{ key: orderId, value: JSON.stringify(envelope), headers }],
  });
}

async function createdEvent(status: TopicReader, orderId: string): Promise<ConsumedMessage> {
  await status.waitFor((messages) => messages.some((m) => m.key === orderId));
  const message = status.messages.find((m) => m.key === orderId);
  if (message === undefined) throw new Error('no status event');
  expect(message.headers['x-event-type']).toBe('payment.created');
  return message;
}

async function paymentRequests(pipeline: Pipeline, traceId: string): Promise<RecordedRequest[]> {
  const response = await fetch(`${pipeline.sandbox.url}/sandbox/request-traces?traceId=${traceId}`);
  const { requests } = (await response.json()) as { requests: RecordedRequest[] };
  return requests.filter((r) => r.method === 'POST' && r.path.endsWith('/api/payments'));
}

describe('trace propagation with the SDK off (the default)', () => {
  let pipeline: Pipeline;
  let status: TopicReader;
  let db: pg.Client;

  beforeAll(async () => {
    pipeline = await startPipeline('tracing-off');
    [, status] = await Promise.all([
      pipeline.startWorker(),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
    ]);
    db = new pg.Client({ connectionString: pipeline.database.url });
    await db.connect();
  });

  afterAll(async () => {
    await db.end();
    await status.stop();
    await pipeline.stop();
  });

  it('follows the ERP trace id to the status event, the Payflow request and the payment', async () => {
    const orderId = anOrderId();
    const traceId = hex(16);
    const erpSpan = hex(8);
    await publishWithHeaders(pipeline, orderId, {
      traceparent: `00-${traceId}-${erpSpan}-01`,
      tracestate: 'erp=7',
    });
    const event = await createdEvent(status, orderId);
    const onEvent = parts(event.headers.traceparent);
    expect(onEvent.traceId).toBe(traceId);
    // The bridge's own step is the parent, not the ERP's span.
    expect(onEvent.parentId).not.toBe(erpSpan);
    expect(event.headers.tracestate).toBe('erp=7');

    const requests = await paymentRequests(pipeline, traceId);
    expect(requests).toHaveLength(1);
    expect(parts(requests[0]?.traceparent ?? undefined).traceId).toBe(traceId);

    const { rows } = await db.query<{ trace_headers: { traceparent: string } | null }>(
      'SELECT trace_headers FROM payments WHERE order_id = $1',
      [orderId],
    );
    expect(parts(rows[0]?.trace_headers?.traceparent).traceId).toBe(traceId);
  });

  it('starts a new trace for an event without traceparent, and for a malformed one', async () => {
    const cases: Record<string, string>[] = [{}, { traceparent: 'not-a-traceparent' }];
    for (const headers of cases) {
      const orderId = anOrderId();
      await publishWithHeaders(pipeline, orderId, headers);
      const event = await createdEvent(status, orderId);
      const { traceId } = parts(event.headers.traceparent);
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(await paymentRequests(pipeline, traceId ?? '')).toHaveLength(1);
    }
  });
});

describe('trace propagation with the SDK on', () => {
  let pipeline: Pipeline;
  let status: TopicReader;
  let tracing: StartedTracing;
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    pipeline = await startPipeline('tracing-on');
    tracing = startTracing({ exporter });
    [, status] = await Promise.all([
      pipeline.startWorker({ tracing }),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
    ]);
  });

  afterAll(async () => {
    await status.stop();
    await pipeline.stop();
  });

  it('records one trace: ERP → handle → Payflow call, handle → publish → status event', async () => {
    const orderId = anOrderId();
    const traceId = hex(16);
    const erpSpan = hex(8);
    await publishWithHeaders(pipeline, orderId, { traceparent: `00-${traceId}-${erpSpan}-01` });
    const event = await createdEvent(status, orderId);
    const [request] = await paymentRequests(pipeline, traceId);

    const spans = (): ReadableSpan[] =>
      exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
    const deadline = Date.now() + 10_000;
    while (!spans().some((s) => s.name.startsWith('publish')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const named = (prefix: string): ReadableSpan => {
      const found = spans().find((span) => span.name.startsWith(prefix));
      if (found === undefined)
        throw new Error(
          `no span ${prefix}: ${spans()
            .map((s) => s.name)
            .join(', ')}`,
        );
      return found;
    };
    const handle = named('order.handle');
    const call = named('payflow createPayment');
    const publish = named('publish');
    expect(handle.parentSpanContext?.spanId).toBe(erpSpan);
    expect(handle.attributes['order.id']).toBe(orderId);
    expect(call.parentSpanContext?.spanId).toBe(handle.spanContext().spanId);
    expect(call.attributes['http.response.status_code']).toBe(200);
    expect(publish.parentSpanContext?.spanId).toBe(handle.spanContext().spanId);
    expect(parts(request?.traceparent ?? undefined).parentId).toBe(call.spanContext().spanId);
    expect(parts(event.headers.traceparent).parentId).toBe(publish.spanContext().spanId);
    // No personal data in any attribute.
    for (const span of spans()) {
      expect(JSON.stringify(span.attributes)).not.toMatch(/@|email|phone/i);
    }
  });
});
