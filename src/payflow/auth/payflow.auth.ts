/**
 * How the client authenticates to Payflow: OAuth 2.0 client credentials.
 *
 * - The token request itself carries the client id and secret as HTTP Basic client
 *   authentication (form-encoded first, RFC 6749 §2.3.1; payflow.client-secret.ts).
 * - A token request refused with `invalid_client` reads PAYFLOW_CLIENT_SECRET_FILE again when
 *   the secret came from one, and is sent once more when the file holds a new secret (a secret
 *   rotated without a restart; payflow.client-secret.ts). Otherwise the refusal stands.
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
} from '../http/payflow.call.js';
import type { ClientSecret } from './payflow.client-secret.js';
import { PayflowError } from '../payflow.errors.js';
import type { TokenResponse } from '../wire/payflow.schemas.js';
import { TokenCache, tokenLifetimeSeconds, type CachedToken } from './payflow.token.js';
import { SecretString, type IssuedToken } from '../payflow.types.js';

/**
 * Sends the token request (through the endpoint table and the transport), authenticated with
 * `credentials`: the client's id and secret as they were when the request was built.
 */
export type RequestToken = (
  scopes: readonly string[] | undefined,
  signal: AbortSignal | undefined,
  credentials: Credentials,
) => Promise<TokenResponse>;

export interface AuthSettings {
  /** Scopes to ask for; default: none asked, every granted scope. */
  readonly scopes: readonly string[] | undefined;
  /** Clock of the token cache. */
  readonly now: () => number;
  /** Aborts when the client closes. */
  readonly closed: AbortSignal;
}

/** The token endpoint refused the client's own credentials (RFC 6749 §5.2 `invalid_client`). */
export function isInvalidClient(error: unknown): error is PayflowError {
  return error instanceof PayflowError && error.payflowCode === 'invalid_client';
}

/** Every other request's credentials: the cached access token. */
export class PayflowAuth implements Credentials {
  private readonly tokens: TokenCache;

  constructor(
    private readonly settings: AuthSettings,
    private readonly secret: ClientSecret,
    private readonly requestToken: RequestToken,
  ) {
    this.tokens = new TokenCache(async () => {
      const token = await this.tokenRequest(this.settings.scopes, undefined);
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
    const token = await this.tokenRequest(scopes ?? this.settings.scopes, signal);
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

  /**
   * One token request with the current secret; refused with `invalid_client`, once more with
   * the secret read again from its file, when that is a new one. The cache's single flight
   * makes this one request (and at most one re-read) however many calls wait for the token.
   */
  private async tokenRequest(
    scopes: readonly string[] | undefined,
    signal: AbortSignal | undefined,
  ): Promise<TokenResponse> {
    const used = this.secret.credentials;
    try {
      return await this.requestToken(scopes, signal, used);
    } catch (error) {
      if (!isInvalidClient(error) || !this.secret.fromFile) throw error;
      const fresh = await this.secret.reread(used);
      if (fresh === undefined) throw error;
      return this.requestToken(scopes, signal, fresh);
    }
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
