/**
 * How the receiver wakes the processor after inbox rows commit. The receiver's
 * `InboxSignal` (src/webhooks/inbox/inbox.signal.ts) is expected to fit this shape; the
 * processor also polls, so nothing depends on it.
 */
export const INBOX_WAKEUP = Symbol('INBOX_WAKEUP');

export interface InboxWakeup {
  /** Calls `listener` whenever new inbox rows committed; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}
