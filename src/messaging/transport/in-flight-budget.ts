/**
 * The delivery engine's memory bound: at most `maxInFlight` messages and `maxInFlightBytes`
 * bytes held (queued + running, back-off waits included). A message larger than the byte
 * bound is still taken when nothing else is held, so it cannot wait forever. A batch that
 * finds no room waits here, heartbeating, until a completion makes some.
 */
import type { InboundMessage } from '../messaging.ports.js';

/** While a batch waits for room, heartbeat this often (kafkajs rate-limits it further). */
const HEARTBEAT_WHILE_WAITING_MS = 500;

/** What a held message costs in memory: its key, value and headers (as text). */
export function messageBytes(message: InboundMessage): number {
  let bytes = (message.key?.length ?? 0) + (message.value?.length ?? 0);
  for (const [name, value] of Object.entries(message.headers)) {
    bytes += name.length + value.length;
  }
  return bytes;
}

export class InFlightBudget {
  private heldCount = 0;
  private bytes = 0;
  private peak = 0;
  private waiters: (() => void)[] = [];
  private readonly maxBytes: number;

  constructor(
    private readonly maxInFlight: number,
    maxInFlightBytes: number | undefined,
  ) {
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1) {
      throw new Error(`maxInFlight must be a positive integer, got ${maxInFlight}`);
    }
    this.maxBytes = maxInFlightBytes ?? Number.POSITIVE_INFINITY;
    if (!(this.maxBytes > 0)) {
      throw new Error(`maxInFlightBytes must be positive, got ${maxInFlightBytes}`);
    }
  }

  get held(): number {
    return this.heldCount;
  }

  get heldBytes(): number {
    return this.bytes;
  }

  /** Most bytes held at any moment since the start. */
  get peakHeldBytes(): number {
    return this.peak;
  }

  /**
   * Whether a message of `bytes` may be held now: below both bounds, or nothing held at all
   * (a message larger than maxInFlightBytes alone is taken, or it would wait forever).
   */
  hasRoomFor(bytes: number): boolean {
    if (this.heldCount === 0) return true;
    return this.heldCount < this.maxInFlight && this.bytes + bytes <= this.maxBytes;
  }

  take(bytes: number): void {
    this.heldCount++;
    this.bytes += bytes;
    if (this.bytes > this.peak) this.peak = this.bytes;
  }

  give(bytes: number): void {
    this.heldCount--;
    this.bytes -= bytes;
  }

  /**
   * Waits until a message of `bytes` fits, heartbeating meanwhile. False when `leave` says
   * the batch should be left (draining, or its partition was revoked).
   */
  async waitForRoom(
    bytes: number,
    leave: () => boolean,
    heartbeat: () => Promise<void>,
  ): Promise<boolean> {
    while (!this.hasRoomFor(bytes)) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, HEARTBEAT_WHILE_WAITING_MS);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (leave()) return false;
      await heartbeat();
    }
    return true;
  }

  /** Wakes every waiting batch: each checks for itself whether its next message fits now. */
  wakeWaiters(): void {
    if (this.waiters.length === 0) return;
    for (const wake of this.waiters.splice(0)) wake();
  }
}
