/**
 * How the receiver wakes the webhook processor: after a batch of webhooks has COMMITTED to
 * the inbox, every `onStored` listener is called once per event-loop turn with the rows
 * stored since the last call (coalesced, so a burst of 2,000 webhooks is a handful of
 * wake-ups, not 2,000). Duplicates are not signalled: their row was signalled before.
 *
 * The signal is a hint, not a queue: a processor must still drain the inbox table itself
 * (rows stored by another replica, or before it subscribed, never come through here).
 * A listener must not throw (it is caught and ignored) and should only schedule work.
 */
import { Injectable } from '@nestjs/common';
import type { WebhookKind } from '../../payflow/wire/payflow.schemas.js';

export interface StoredWebhook {
  /** webhook_inbox.id (bigint as a decimal string). */
  readonly inboxId: string;
  readonly paymentId: string;
  readonly kind: WebhookKind;
}

export type InboxListener = (stored: readonly StoredWebhook[]) => void;

@Injectable()
export class InboxSignal {
  private readonly listeners = new Set<InboxListener>();
  private pending: StoredWebhook[] = [];
  private scheduled: NodeJS.Immediate | undefined;

  /** Calls `listener` after rows were committed to the inbox. Returns an unsubscribe. */
  onStored(listener: InboxListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The same without the rows (fits the processor's `InboxWakeup`: provide INBOX_WAKEUP
   * with `useExisting: InboxSignal`).
   */
  subscribe(listener: () => void): () => void {
    return this.onStored(() => listener());
  }

  /** Called by the receiver once the row's transaction committed. */
  notify(stored: StoredWebhook): void {
    this.pending.push(stored);
    this.scheduled ??= setImmediate(() => this.deliver());
  }

  /** Delivers what is pending now (tests, shutdown). */
  flush(): void {
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.deliver();
  }

  private deliver(): void {
    this.scheduled = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(batch);
      } catch {
        // A listener's failure must not affect the receiver or the other listeners.
      }
    }
  }
}
