/**
 * The console's sessions, in this process's memory: a signed-in operator holds a random
 * session id (256 bits, in an HttpOnly cookie); the store keeps, per id, who signed in,
 * the session's CSRF token and when it ends. A session ends after `idleMs` without a
 * request or `maxMs` after sign-in, whichever comes first, or at sign-out.
 *
 * Memory, not Postgres, on purpose: a restart signs everyone out (they sign in again with
 * the token), no session outlives the process that issued it, and nothing secret is
 * written to disk. With several replicas, the management port must reach one replica per
 * operator (it is the private operations listener: usually one port-forward).
 */
import { createHash, randomBytes } from 'node:crypto';

/** `viewer` reads; `operator` reads and acts (replay, verdict, pull, forget, discard, reveal). */
export const CONSOLE_ROLES = ['viewer', 'operator'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** Who signed in, as the audit trail names them. */
export interface ConsoleIdentity {
  /**
   * "Who" in the audit trail: the provider's display name (OpenID), or the name the person
   * typed at the token sign-in (unverified).
   */
  readonly operator: string;
  /** The provider's subject (`sub`), null for a token sign-in. */
  readonly subject: string | null;
  /** Whether the provider vouched for who it is (OpenID), or the name was only typed (token). */
  readonly verified: boolean;
  readonly role: ConsoleRole;
}

export interface ConsoleSession extends ConsoleIdentity {
  /** Each POST carries it in its form (`_csrf`); compared in constant time. */
  readonly csrfToken: string;
  readonly signedInAt: number;
  lastSeenAt: number;
  /** The client address of the session's latest request (recorded with each action). */
  clientAddress: string;
}

export interface SessionLimits {
  readonly idleMs: number;
  readonly maxMs: number;
}

/** A random, URL-safe secret of 32 bytes. */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Sessions are kept under a digest of their id: the map never holds the cookie's value. */
function keyOf(sessionId: string): string {
  return createHash('sha256').update(sessionId, 'utf8').digest('base64url');
}

export class SessionStore {
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly limits: SessionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Opens a session for `identity`, signed in from `clientAddress`; its id goes into the cookie. */
  open(identity: ConsoleIdentity, clientAddress: string): { id: string; session: ConsoleSession } {
    this.sweep();
    const id = randomSecret();
    const at = this.now();
    const session: ConsoleSession = {
      operator: identity.operator,
      subject: identity.subject,
      verified: identity.verified,
      role: identity.role,
      csrfToken: randomSecret(),
      signedInAt: at,
      lastSeenAt: at,
      clientAddress,
    };
    this.sessions.set(keyOf(id), session);
    return { id, session };
  }

  /** The live session of `id`, its idle clock restarted; undefined when none or ended. */
  touch(id: string | undefined): ConsoleSession | undefined {
    if (id === undefined || id === '') return undefined;
    const key = keyOf(id);
    const session = this.sessions.get(key);
    if (session === undefined) return undefined;
    const at = this.now();
    if (this.ended(session, at)) {
      this.sessions.delete(key);
      return undefined;
    }
    session.lastSeenAt = at;
    return session;
  }

  close(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(keyOf(id));
  }

  get size(): number {
    return this.sessions.size;
  }

  private ended(session: ConsoleSession, at: number): boolean {
    return (
      at - session.lastSeenAt >= this.limits.idleMs || at - session.signedInAt >= this.limits.maxMs
    );
  }

  /** Forgets ended sessions (at each sign-in: the map never grows with abandoned ones). */
  private sweep(): void {
    const at = this.now();
    for (const [key, session] of this.sessions) {
      if (this.ended(session, at)) this.sessions.delete(key);
    }
  }
}
