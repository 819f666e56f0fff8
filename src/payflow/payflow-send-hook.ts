/**
 * "This request is about to leave": a hook that the caller of a Payflow call can install
 * for the calls it makes (the order command engine records `command_attempts.sent_at`
 * with it). PayflowClient runs it after the 429 gate, the token and a connection slot,
 * immediately before the request is written, and sends only once it resolved: a request
 * whose hook was not run (or failed) never left the process.
 *
 * The hook is tied to the call's AbortSignal, which every command handler already passes
 * to the client as it is, so the eleven handlers need not pass the hook too. Not an
 * AsyncLocalStorage: on Node 20 one of those turns on promise hooks for every promise of
 * the process, which cost the worker a large share of its CPU per order.
 */
import { SignalTied } from './signal-tied.js';

export type PayflowSendHook = () => Promise<void>;

const hooks = new SignalTied<PayflowSendHook>();

/** Installs `hook` for the Payflow requests made with `signal`; returns the signal. */
export function withPayflowSendHook(signal: AbortSignal, hook: PayflowSendHook): AbortSignal {
  return hooks.tie(signal, hook);
}

/** The hook installed for the call's signal, if any. */
export function payflowSendHookOf(signal: AbortSignal | undefined): PayflowSendHook | undefined {
  return hooks.of(signal);
}
