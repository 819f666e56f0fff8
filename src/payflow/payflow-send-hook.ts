/**
 * "This request is about to leave": a hook that the caller of a Payflow call can pass in the
 * call's options (`CallOptions.onSend`; the order command engine records
 * `command_attempts.sent_at` with it). PayflowClient runs it after the 429 gate, the token
 * and a connection slot, immediately before the request is written, and sends only once it
 * resolved: a request whose hook was not run (or failed) never left the process.
 *
 * It travels with the call's options, not with its AbortSignal: a handler may derive a new
 * signal (`AbortSignal.any`, a time-out) and the hook still runs.
 */
export type PayflowSendHook = () => Promise<void>;
