/**
 * patches/kafkajs+2.2.4.patch (applied by patch-package on npm install) is in place: an idle
 * kafkajs request queue must not re-arm its pending-request check. Unpatched, every broker
 * connection ran a 1 ms timer forever (tulios/kafkajs#1556, #1704): an idle worker woke
 * ~900 times a second and used 3 % of a core doing nothing. And the request-timeout check
 * runs every second, not every 100 ms: it runs on every open connection, idle or not.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { createRequire } from 'node:module';

interface InflightLike {
  readonly sentAt: number;
  readonly requestTimeout: number;
  timeoutRequest(): void;
}

interface RequestQueueLike {
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  throttledUntil: number;
  pending: unknown[];
  inflight: Map<number, InflightLike>;
  scheduleCheckPendingRequests(): void;
  scheduleRequestTimeoutCheck(): void;
  destroy(): void;
}

type RequestQueueClass = new (options: Record<string, unknown>) => RequestQueueLike;

const require = createRequire(import.meta.url);
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as RequestQueueClass;

const logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  namespace: () => logger,
};

function queue(enforceRequestTimeout = false): RequestQueueLike {
  return new RequestQueue({
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    enforceRequestTimeout,
    clientId: 'spec',
    broker: '127.0.0.1:9092',
    logger,
  });
}

describe('kafkajs request queue (patched)', () => {
  it('schedules no check when nothing is pending and nothing is throttled', () => {
    const idle = queue();
    idle.scheduleCheckPendingRequests();
    const armed = idle.throttleCheckTimeoutId;
    // Unpatched, the timer re-arms itself forever: stop it, or the test run never ends.
    if (armed !== null) clearTimeout(armed);
    expect(armed).toBeNull();
  });

  it('still schedules the check while throttled', () => {
    const throttled = queue();
    throttled.throttledUntil = Date.now() + 50;
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
    if (throttled.throttleCheckTimeoutId !== null) clearTimeout(throttled.throttleCheckTimeoutId);
  });

  it('still schedules the check when requests are pending', () => {
    const busy = queue();
    busy.pending.push({});
    busy.scheduleCheckPendingRequests();
    expect(busy.throttleCheckTimeoutId).not.toBeNull();
    if (busy.throttleCheckTimeoutId !== null) clearTimeout(busy.throttleCheckTimeoutId);
  });

  it('checks request timeouts every second, not every 100 ms', () => {
    jest.useFakeTimers({ now: 100_000 });
    const open = queue(true);
    try {
      let timedOut = 0;
      open.inflight.set(1, {
        sentAt: 100_000 - 30_500,
        requestTimeout: 30_000,
        timeoutRequest: () => {
          timedOut += 1;
        },
      });
      open.scheduleRequestTimeoutCheck();
      jest.advanceTimersByTime(999);
      expect(timedOut).toBe(0);
      jest.advanceTimersByTime(1);
      expect(timedOut).toBe(1);
    } finally {
      open.destroy();
      jest.useRealTimers();
    }
  });
});
