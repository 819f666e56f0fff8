/**
 * The client's access-token cache: one token, refreshed shortly before it expires by a single
 * request however many callers wait for it (single flight), and dropped after a 401.
 */

/**
 * Lifetime assumed for a token answer without `expires_in` (the spec shows no token answer;
 * docs/assumptions.md "Token answers without expires_in"). Short on purpose: a token that dies
 * sooner costs one 401 and one refresh, which the client does anyway.
 */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 300;

/** The lifetime of a token answer: its `expires_in`, else the default. */
export function tokenLifetimeSeconds(expiresIn: number | undefined): number {
  return expiresIn ?? DEFAULT_TOKEN_LIFETIME_SECONDS;
}

export interface FetchedToken {
  readonly accessToken: string;
  readonly expiresInSeconds: number;
}

export interface CachedToken {
  readonly accessToken: string;
  /** Epoch ms when Payflow stops accepting it. */
  readonly expiresAt: number;
  /** Epoch ms from which the cache fetches a new one. */
  readonly refreshAt: number;
}

/**
 * Refresh 60 s before expiry, or at half the lifetime when that comes first
 * (docs/assumptions.md).
 */
export function refreshMarginMs(expiresInSeconds: number): number {
  return Math.min(60_000, (expiresInSeconds * 1000) / 2);
}

export class TokenCache {
  private current: CachedToken | undefined;
  private inFlight: Promise<CachedToken> | undefined;
  private fetches = 0;

  constructor(
    private readonly fetchToken: () => Promise<FetchedToken>,
    private readonly now: () => number = Date.now,
  ) {}

  /** A usable token: the cached one, the one being fetched, or a new fetch. */
  get(): Promise<CachedToken> {
    const current = this.peek();
    return current === undefined ? this.refresh() : Promise.resolve(current);
  }

  /** The cached token while it needs no refresh (no waiting, no promise), else undefined. */
  peek(): CachedToken | undefined {
    const current = this.current;
    return current !== undefined && this.now() < current.refreshAt ? current : undefined;
  }

  /** Forgets `accessToken` if it is still the cached one (a 401 proved it dead). */
  invalidate(accessToken: string): void {
    if (this.current?.accessToken === accessToken) this.current = undefined;
  }

  /** How many token requests this cache started (for diagnostics and tests). */
  get fetchCount(): number {
    return this.fetches;
  }

  private refresh(): Promise<CachedToken> {
    if (this.inFlight !== undefined) return this.inFlight;
    this.fetches += 1;
    const startedAt = this.now();
    const flight = this.fetchToken().then(
      (fetched) => {
        const lifetimeMs = fetched.expiresInSeconds * 1000;
        const token: CachedToken = {
          accessToken: fetched.accessToken,
          expiresAt: startedAt + lifetimeMs,
          refreshAt: startedAt + lifetimeMs - refreshMarginMs(fetched.expiresInSeconds),
        };
        this.current = token;
        this.inFlight = undefined;
        return token;
      },
      (error: unknown) => {
        this.inFlight = undefined;
        throw error;
      },
    );
    this.inFlight = flight;
    return flight;
  }
}
