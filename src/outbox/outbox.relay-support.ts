/**
 * Transitional re-exports: the relay's helpers moved to src/common (back-off, Wakeup,
 * sleep, mapBounded) and the lock key space to relay-locks.repository.ts. Kept only for
 * importers outside the outbox's owners (src/webhooks/processing/webhook-inbox.processor.ts);
 * import from src/common instead, and delete this file once nothing imports it.
 */
export { backoffDelay } from '../common/backoff.js';
export { mapBounded } from '../common/map-bounded.js';
export { sleep } from '../common/sleep.js';
export { Wakeup } from '../common/wakeup.js';
export { RELAY_LOCK_NAMESPACE } from './relay-locks.repository.js';
