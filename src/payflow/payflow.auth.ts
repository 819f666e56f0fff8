/**
 * How the client authenticates to Payflow: OAuth 2.0 client credentials.
 *
 * - The token request itself carries the client id and secret as HTTP Basic client
 *   authentication (form-encoded first, RFC 6749 §2.3.1).
 * - Every other request carries the cached access token (payflow.token.ts: fetched by one
 *   request however many callers wait, refreshed shortly before expiry, 300 s assumed when
 *   Payflow does not say). A 401 drops it, and the transport tries once more with a new one.
 * - A token failure is re-attributed to the call that waited for it, as not sent.
 */
import {
  abortReason,
  abortedBeforeSending,
  callSignal,
  type Authorization,
  type Credentials,
  type HttpCall,
} from './payflow.call.js';
import { PayflowError } from './payflow.errors.js';
import type { TokenResponse } from './payflow.schemas.js';
import { TokenCache, tokenLifetimeSeconds, type CachedToken } from './payflow.token.js';
import { SecretString, type IssuedToken } from './payflow.types.js';

/** Sends the token request (through the endpoint table and the transport). */
export type RequestToken = (
  scopes: readonly string[] | undefined,
  signal: AbortSignal | undefined,
) => Promise<TokenResponse>;

export interface AuthSettings {
  /** Scopes to ask for; default: none asked, every granted scope. */
  readonly scopes: readonly string[] | undefined;
  /** Clock of the token cache. */
  readonly now: () => number;
  /** Aborts when the client closes. */
  readonly closed: AbortSignal;
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 appendix B). */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** The token request's credentials: the client's own, which a fresh try cannot change. */
export function basicCredentials(clientId: string, clientSecret: string): Credentials {
  if (!clientId || !clientSecret) {
    throw new Error('PayflowClient: clientId and clientSecret are required');
  }
  const encoded = Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`);
  const basic: Authorization = { header: `Basic ${encoded.toString('base64')}` };
  return { authorize: () => Promise.resolve(basic) };
}

/** Every other request's credentials: the cached access token. */
export class PayflowAuth implements Credentials {
  private readonly tokens: TokenCache;

  constructor(
    private readonly settings: AuthSettings,
    private readonly requestToken: RequestToken,
  ) {
    this.tokens = new TokenCache(async () => {
      const token = await this.requestToken(this.settings.scopes, undefined);
      return {
        accessToken: token.access_token,
        expiresInSeconds: tokenLifetimeSeconds(token.expires_in),
      };
    }, settings.now);
  }

  /** The Authorization of the next attempt; a 401 drops its token (`renew`). */
  async authorize(call: HttpCall): Promise<Authorization> {
    const token = await this.bearerToken(call);
    return {
      header: `Bearer ${token.accessToken}`,
      renew: () => this.tokens.invalidate(token.accessToken),
    };
  }

  /** A fresh token, outside the cache (POST /auth/token on behalf of a caller). */
  async issue(scopes: readonly string[] | undefined, signal?: AbortSignal): Promise<IssuedToken> {
    const token = await this.requestToken(scopes ?? this.settings.scopes, signal);
    return {
      accessToken: new SecretString(token.access_token),
      tokenType: token.token_type,
      expiresInSeconds: tokenLifetimeSeconds(token.expires_in),
      scopes: token.scope === undefined ? [] : token.scope.split(' ').filter(Boolean),
    };
  }

  /** Token requests started for the cache (diagnostics). */
  get fetchCount(): number {
    return this.tokens.fetchCount;
  }

  /** The cached token (single flight); a token failure is re-attributed to this call, unsent. */
  private async bearerToken(call: HttpCall): Promise<CachedToken> {
    const { closed } = this.settings;
    // The common case: a cached token, nothing to wait for (no composite signal, no race).
    const cached = this.tokens.peek();
    if (cached !== undefined && call.signal?.aborted !== true) {
      if (closed.aborted) throw abortedBeforeSending(call, 'closed');
      return cached;
    }
    const signal = callSignal(call, closed);
    if (signal.aborted) throw abortedBeforeSending(call, abortReason(closed));
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => undefined);
    try {
      return await Promise.race([this.tokens.get(), aborted]);
    } catch (error) {
      if (error instanceof PayflowError) {
        throw error.withContext({
          endpoint: call.endpoint.name,
          method: call.endpoint.method,
          reached: 'no',
          status: error.status,
          payflowCode: error.payflowCode,
          retryAfterMs: error.retryAfterMs,
          stage: 'token',
          attempt: error.attempt,
          cause: error,
        });
      }
      if (signal.aborted) throw abortedBeforeSending(call, abortReason(closed));
      throw error;
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }
}
