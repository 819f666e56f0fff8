/**
 * OpenID sign-ins on their way through the provider, in this process's memory: the browser
 * holds a random id (cookie `pfb_console_oidc`); the store keeps, under a digest of it, the
 * state, nonce and PKCE verifier and where to go afterwards, for `ttlMs`. Each is taken
 * once: a callback replayed, or one that comes back to another browser, finds nothing.
 */
import { createHash } from 'node:crypto';
import { randomSecret } from '../sign-in/session-store.js';
import type { OidcChallenge } from './oidc-client.js';

export interface PendingSignIn {
  readonly challenge: OidcChallenge;
  /** The console path to open after signing in. */
  readonly next: string;
  readonly startedAt: number;
}

/** Sign-ins kept at most; past it the oldest is forgotten (memory stays bounded). */
const MAX_PENDING = 1_000;

function keyOf(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('base64url');
}

export class PendingSignIns {
  private readonly pending = new Map<string, PendingSignIn>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Keeps a started sign-in; its id goes into the browser's cookie. */
  add(challenge: OidcChallenge, next: string): string {
    this.sweep();
    const id = randomSecret();
    this.pending.set(keyOf(id), { challenge, next, startedAt: this.now() });
    if (this.pending.size > MAX_PENDING) {
      const oldest = this.pending.keys().next();
      if (oldest.done !== true) this.pending.delete(oldest.value);
    }
    return id;
  }

  /** The sign-in of `id`, removed (a second take finds nothing); undefined when none or ended. */
  take(id: string): PendingSignIn | undefined {
    if (id === '') return undefined;
    const key = keyOf(id);
    const found = this.pending.get(key);
    this.pending.delete(key);
    if (found === undefined || this.now() - found.startedAt >= this.ttlMs) return undefined;
    return found;
  }

  get size(): number {
    return this.pending.size;
  }

  private sweep(): void {
    const at = this.now();
    for (const [key, found] of this.pending) {
      if (at - found.startedAt >= this.ttlMs) this.pending.delete(key);
    }
  }
}
