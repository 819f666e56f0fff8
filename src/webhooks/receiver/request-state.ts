/**
 * Per-request facts shared between the fastify hooks and the Nest controller/filter
 * without touching fastify's request object: the raw body bytes and the outcome.
 */
import type { ReceiveOutcome } from './receiver.metrics.js';

const rawBodies = new WeakMap<object, Buffer>();
const outcomes = new WeakMap<object, ReceiveOutcome>();

export function keepRawBody(request: object, body: Buffer): void {
  rawBodies.set(request, body);
}

/** The body's bytes as received (also found when Nest's own `rawBody: true` is on). */
export function rawBodyOf(request: object): Buffer | undefined {
  const kept = rawBodies.get(request);
  if (kept !== undefined) return kept;
  const nest: unknown = Reflect.get(request, 'rawBody');
  return Buffer.isBuffer(nest) ? nest : undefined;
}

export function markOutcome(request: object, outcome: ReceiveOutcome): void {
  outcomes.set(request, outcome);
}

export function outcomeOf(request: object): ReceiveOutcome | undefined {
  return outcomes.get(request);
}
