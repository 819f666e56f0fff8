import { RequestTraces } from './request-traces.js';

const parent = (trace: string, span = '00f067aa0ba902b7'): string => `00-${trace}-${span}-01`;
const A = '4bf92f3577b34da6a3ce929d0e0e4736';
const B = 'a'.repeat(31) + 'b';

describe('RequestTraces', () => {
  it('keeps the trace headers of requests that carry a well-formed traceparent', () => {
    const traces = new RequestTraces();
    traces.record('POST', '/api/payments', parent(A), 'erp=1');
    traces.record('GET', '/api/payments/p1/paymentStatus', undefined, undefined);
    traces.record('GET', '/api/payments/p1/paymentStatus', 'not a traceparent', undefined);
    traces.record('POST', '/api/payments/p1/sendPayment', parent(B), undefined);
    expect(traces.find(A)).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/api/payments',
        traceparent: parent(A),
        tracestate: 'erp=1',
        traceId: A,
      }),
    ]);
    expect(traces.find().map((entry) => entry.traceId)).toEqual([A, B]);
    expect(traces.find(A.toUpperCase())).toHaveLength(1);
  });

  it('forgets the oldest beyond its capacity, and everything when cleared', () => {
    const traces = new RequestTraces(3);
    for (const path of ['/1', '/2', '/3', '/4']) traces.record('GET', path, parent(A), undefined);
    expect(traces.find(A).map((entry) => entry.path)).toEqual(['/2', '/3', '/4']);
    traces.clear();
    expect(traces.find()).toEqual([]);
  });
});
