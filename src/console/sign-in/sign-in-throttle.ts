/**
 * Wrong tokens per client (an IPv4 address or an IPv6 /64, as the public listener counts
 * them): after `limit` wrong tokens within `windowMs`, the client's next sign-ins are
 * refused (429 with Retry-After) until the oldest of them leaves the window. A right token
 * does not clear the count: guessing between two right sign-ins gains nothing.
 */
import { clientOf } from '../../management/connection-limiter.js';

/** Clients tracked at most; past it the oldest is forgotten (memory stays bounded). */
const MAX_CLIENTS = 10_000;

export class SignInThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** 0 when `address` may try now, else the milliseconds it must wait. */
  waitFor(address: string): number {
    const recent = this.recent(clientOf(address));
    if (recent.length < this.limit) return 0;
    const oldest = recent[recent.length - this.limit] ?? this.now();
    return Math.max(1, oldest + this.windowMs - this.now());
  }

  /** One more wrong token from `address`. */
  failed(address: string): void {
    const client = clientOf(address);
    const recent = this.recent(client);
    recent.push(this.now());
    this.failures.delete(client);
    this.failures.set(client, recent);
    if (this.failures.size > MAX_CLIENTS) {
      const oldest = this.failures.keys().next();
      if (oldest.done !== true) this.failures.delete(oldest.value);
    }
  }

  private recent(client: string): number[] {
    const since = this.now() - this.windowMs;
    const recent = (this.failures.get(client) ?? []).filter((at) => at > since);
    if (recent.length === 0) this.failures.delete(client);
    else this.failures.set(client, recent);
    return recent;
  }
}
