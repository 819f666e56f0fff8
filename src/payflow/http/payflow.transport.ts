/**
 * How a request reaches Payflow, whatever the endpoint: the retry loop around one HTTP
 * exchange (payflow.exchange.ts).
 *
 * - A 429 closes a client-wide gate for its Retry-After (capped): every later call waits.
 * - Each request takes one of the origin's `connections` slots before it is handed to undici
 *   (so it never queues inside undici), then runs the caller's send hook
 *   (payflow-send-hook.ts), then leaves: a call still waiting for the gate, the token or a
 *   slot has certainly not been sent.
 * - Idempotent requests (GET, PUT, the token request) are retried on transient failures
 *   (exponential back-off with jitter, Retry-After honoured). POST and DELETE never are: the
 *   caller decides with `error.reached`. A 401 gets one fresh credential, then is final.
 * - close() ends every wait and releases the pool.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { AppLogger } from '../../logging/logger.js';
import {
  abortReason,
  abortedBeforeSending,
  callSignal,
  type Authorization,
  type Consume,
  type HttpCall,
} from './payflow.call.js';
import { HttpExchange, type ExchangeSettings } from './payflow.exchange.js';
import { PayflowAbortedError, PayflowError } from '../payflow.errors.js';
import { sleep } from '../../timing/sleep.js';
import { retryDelayMs } from './payflow.retry.js';
import { Slots } from './payflow.slots.js';

export interface TransportSettings extends Omit<ExchangeSettings, 'onRateLimited'> {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxRetryAfterMs: number;
  readonly defaultRateLimitDelayMs: number;
  readonly random: () => number;
}

const CLOSE_TIMEOUT_MS = 5_000;

class ClientClosed extends Error {
  constructor() {
    super('PayflowClient is closed');
    this.name = 'ClientClosed';
  }
}

export class PayflowTransport {
  private readonly exchange: HttpExchange;
  private readonly closeController = new AbortController();
  private closing: Promise<void> | undefined;
  /** Monotonic time (performance.now) before which no request is sent (set by a 429). */
  private notBefore = 0;
  /** Connection slots per origin (as many as undici's pool has connections). */
  private readonly slots = new Map<string, Slots>();
  private readonly logger: AppLogger;

  constructor(private readonly settings: TransportSettings) {
    this.logger = settings.logger;
    this.exchange = new HttpExchange({
      ...settings,
      onRateLimited: (retryAfterMs) => this.closeGate(retryAfterMs),
    });
    // Every waiting call listens to the close signal; hundreds may wait at once.
    setMaxListeners(0, this.closeController.signal);
  }

  /** Aborts when the client closes. */
  get closed(): AbortSignal {
    return this.closeController.signal;
  }

  async execute<T>(call: HttpCall, consume: Consume<T>): Promise<T> {
    let attempt = 1;
    let renewed = false;
    for (;;) {
      await this.waitForGate(call);
      const authorization: Authorization = await call.credentials.authorize(call);
      const slots = this.slotsOf(call.base.origin);
      await this.takeSlot(slots, call);
      if (this.notBefore > performance.now()) {
        // A 429 closed the gate while this call waited for a slot: wait again.
        slots.release();
        continue;
      }
      let released = false;
      try {
        // A call with a body runs the hook inside the exchange, on its connection (gatedBody).
        if (call.body === undefined) await this.runSendHook(call);
        return await this.exchange.send(call, authorization.header, attempt, consume);
      } catch (error) {
        if (!(error instanceof PayflowError)) throw error;
        if (error.status === 401 && authorization.renew !== undefined && !renewed) {
          // The credential is dead (expired early, revoked): one fresh one, then a 401 is final.
          renewed = true;
          authorization.renew();
          continue;
        }
        const delay = this.retryDelay(call, error, attempt);
        if (delay === undefined) throw error;
        slots.release();
        released = true;
        await this.pause(delay, call, error);
        attempt += 1;
      } finally {
        if (!released) slots.release();
      }
    }
  }

  /**
   * Refuses new calls, ends waits (gate, back-off), lets requests in flight finish (at most
   * a few seconds, then their connections are destroyed) and releases the pool.
   */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.closeController.abort(new ClientClosed());
    this.exchange.stopWatching();
    const { agent } = this.exchange;
    this.closing = (async () => {
      let timer: NodeJS.Timeout | undefined;
      const forced = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), CLOSE_TIMEOUT_MS);
        timer.unref();
      });
      const result = await Promise.race([agent.close().then(() => 'closed' as const), forced]);
      clearTimeout(timer);
      if (result === 'timeout') await agent.destroy();
    })();
    return this.closing;
  }

  /** The wait before the next attempt, or undefined when this failure is final. */
  private retryDelay(call: HttpCall, error: PayflowError, attempt: number): number | undefined {
    const retryable =
      error.transient &&
      error.code !== 'PAYFLOW.ABORTED' &&
      call.endpoint.idempotent &&
      attempt < this.settings.maxAttempts;
    if (!retryable) return undefined;
    return retryDelayMs(attempt, error.retryAfterMs, this.settings, this.settings.random);
  }

  private slotsOf(origin: string): Slots {
    let slots = this.slots.get(origin);
    if (slots === undefined) {
      slots = new Slots(this.settings.connections);
      this.slots.set(origin, slots);
    }
    return slots;
  }

  /** Waits for a connection slot of the origin; aborts like the gate (nothing sent). */
  private async takeSlot(slots: Slots, call: HttpCall): Promise<void> {
    if (slots.tryTake()) return;
    try {
      await slots.take(callSignal(call, this.closed));
    } catch {
      throw abortedBeforeSending(call, abortReason(this.closed));
    }
  }

  /**
   * The caller's "about to send" hook. When it fails (its record could not be written, or
   * the caller no longer owns the call) the request is not sent.
   */
  private async runSendHook(call: HttpCall): Promise<void> {
    const hook = call.onSend;
    if (hook === undefined) return;
    try {
      await hook();
    } catch (error) {
      throw abortedBeforeSending(call, 'caller', error);
    }
  }

  /** Waits while a 429's gate is closed. */
  private async waitForGate(call: HttpCall): Promise<void> {
    for (;;) {
      const wait = this.notBefore - performance.now();
      if (this.closed.aborted) throw abortedBeforeSending(call, 'closed');
      if (wait <= 0) return;
      await this.pause(wait, call);
    }
  }

  /** A 429: no request leaves this client before Retry-After (capped) has passed. */
  private closeGate(retryAfterMs: number | undefined): void {
    const delay = Math.min(
      retryAfterMs ?? this.settings.defaultRateLimitDelayMs,
      this.settings.maxRetryAfterMs,
    );
    this.notBefore = Math.max(this.notBefore, performance.now() + delay);
    this.logger.debug({ delayMs: delay }, 'payflow rate limit: holding calls');
  }

  /** Sleeps, ending early (as PAYFLOW.ABORTED) when the caller aborts or the client closes. */
  private async pause(ms: number, call: HttpCall, previous?: PayflowError): Promise<void> {
    try {
      await sleep(ms, callSignal(call, this.closed));
    } catch {
      const reason = abortReason(this.closed);
      if (previous === undefined) throw abortedBeforeSending(call, reason);
      throw new PayflowAbortedError(
        {
          endpoint: call.endpoint.name,
          method: call.endpoint.method,
          reached: previous.reached,
          status: previous.status,
          attempt: previous.attempt,
          cause: previous,
        },
        reason,
      );
    }
  }
}
