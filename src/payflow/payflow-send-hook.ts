/**
 * "This request is about to leave": a hook that the caller of a Payflow call can install
 * for the calls it makes (the order command engine records `command_attempts.sent_at`
 * with it). PayflowClient runs it after the 429 gate, the token and a connection slot,
 * immediately before the request is written, and sends only once it resolved: a request
 * whose hook was not run (or failed) never left the process.
 *
 * The hook travels with the async context of the call (AsyncLocalStorage), so that the
 * eleven command handlers need not pass it through.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export type PayflowSendHook = () => Promise<void>;

const storage = new AsyncLocalStorage<PayflowSendHook>();

/** Runs `work` with `hook` installed for the Payflow requests it makes. */
export function withPayflowSendHook<T>(hook: PayflowSendHook, work: () => Promise<T>): Promise<T> {
  return storage.run(hook, work);
}

/** The hook of the current call, if its caller installed one. */
export function currentPayflowSendHook(): PayflowSendHook | undefined {
  return storage.getStore();
}
