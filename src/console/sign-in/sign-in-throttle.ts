/**
 * Failed sign-ins (a wrong token; an OpenID sign-in the provider or our checks refused),
 * counted two ways within one window:
 *
 * - per client (an IPv4 address or an IPv6 /64, as the public listener counts them): after
 *   `perClient` failures, that client's next sign-ins are refused (429 with Retry-After)
 *   until the oldest of them leaves the window;
 * - for everyone together: after `global` failures from any clients, every sign-in waits
 *   the same way. A guesser spread over many addresses then gains no more than `global`
 *   tries a window, whatever the number of its addresses.
 *
 * A right token does not clear a count: guessing between two right sign-ins gains nothing.
 */
import { clientOf } from '../../management/connection-limiter.js';

/** Clients tracked at most; past it the oldest is forgotten (memory stays bounded). */
const MAX_CLIENTS = 10_000;

export interface SignInLimits {
  /** Failures from one client within the window before it must wait. */
  readonly perClient: number;
  /** Failures from all clients within the window before everyone must wait. */
  readonly global: number;
  readonly windowMs: number;
}

/** Who must wait: this client, or everyone (the global limit). */
export type ThrottleScope = 'client' | 'everyone';

export interface ThrottleWait {
  readonly ms: number;
  readonly scope: ThrottleScope;
}

export class SignInThrottle {
  private readonly failures = new Map<string, number[]>();
  /** The latest failures of all clients, oldest first (at most `global` of them). */
  private everyone: number[] = [];

  constructor(
    private readonly limits: SignInLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Undefined when `address` may try now, else how long it must wait and why. */
  waitFor(address: string): ThrottleWait | undefined {
    const client = this.waitOf(this.recent(clientOf(address)), this.limits.perClient);
    const global = this.waitOf(this.recentOfEveryone(), this.limits.global);
    if (client === 0 && global === 0) return undefined;
    return client >= global ? { ms: client, scope: 'client' } : { ms: global, scope: 'everyone' };
  }

  /** One more failed sign-in from `address`. */
  failed(address: string): void {
    const client = clientOf(address);
    const at = this.now();
    const recent = this.recent(client);
    recent.push(at);
    this.failures.delete(client);
    this.failures.set(client, recent);
    if (this.failures.size > MAX_CLIENTS) {
      const oldest = this.failures.keys().next();
      if (oldest.done !== true) this.failures.delete(oldest.value);
    }
    const everyone = this.recentOfEveryone();
    everyone.push(at);
    if (everyone.length > this.limits.global) everyone.shift();
  }

  /** Milliseconds until `recent` (oldest first) holds fewer than `limit` failures. */
  private waitOf(recent: readonly number[], limit: number): number {
    if (recent.length < limit) return 0;
    const oldest = recent[recent.length - limit] ?? this.now();
    return Math.max(1, oldest + this.limits.windowMs - this.now());
  }

  private recent(client: string): number[] {
    const since = this.now() - this.limits.windowMs;
    const recent = (this.failures.get(client) ?? []).filter((at) => at > since);
    if (recent.length === 0) this.failures.delete(client);
    else this.failures.set(client, recent);
    return recent;
  }

  private recentOfEveryone(): number[] {
    const since = this.now() - this.limits.windowMs;
    this.everyone = this.everyone.filter((at) => at > since);
    return this.everyone;
  }
}
