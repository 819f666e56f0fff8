/**
 * The console's one adapter to the organization's OpenID provider, through openid-client
 * (v6, which speaks the protocol: discovery, the authorization code flow with PKCE, the
 * token request, and the ID token's checks). Nothing of the protocol is written here; this
 * class only says which checks to ask for and turns the ID token into a console identity:
 *
 * - `start` makes a fresh state, nonce and PKCE verifier (S256) and the provider's
 *   authorization URL for them;
 * - `finish` hands the callback URL and what `start` made to `authorizationCodeGrant`, which
 *   checks the state, redeems the code with the verifier, and checks the ID token: issuer,
 *   audience, expiry, nonce, and (enableNonRepudiationChecks) its signature against the
 *   provider's published keys (JWKS);
 * - the roles come from the ID token's roles claim (CONSOLE_OIDC_ROLES_CLAIM).
 *
 * The provider's discovery document is read at the first sign-in and kept; a failed read is
 * tried again at the next sign-in.
 */
import * as openid from 'openid-client';
import type { ConsoleOidcSettings } from '../console.options.js';
import { OidcSignInFailed } from '../access/console.errors.js';
import type { ConsoleIdentity, ConsoleRole } from '../sign-in/session-store.js';

/** What a started sign-in keeps until the provider sends the browser back. */
export interface OidcChallenge {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  /** The redirect URI sent to the provider: the token request must name the same. */
  readonly redirectUri: string;
}

/** Longest display name kept (it is "who" in the audit trail). */
const MAX_NAME = 120;

/** Roles a session may hold, strongest first. */
const ROLE_RANK: readonly ConsoleRole[] = ['operator', 'viewer'];

/**
 * The console role of an ID token's roles claim: `operator` when it names operator,
 * `viewer` when it names viewer only, undefined when neither. The claim may be a list of
 * strings or one string of space- or comma-separated roles (providers differ).
 */
export function roleOf(claim: unknown): ConsoleRole | undefined {
  const roles =
    typeof claim === 'string'
      ? claim.split(/[\s,]+/)
      : Array.isArray(claim)
        ? claim.filter((role): role is string => typeof role === 'string')
        : [];
  return ROLE_RANK.find((role) => roles.includes(role));
}

/** A claim read by a dotted path (`realm_access.roles`), as some providers nest roles. */
export function claimAt(claims: Readonly<Record<string, unknown>>, path: string): unknown {
  if (path in claims) return claims[path];
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The name the audit shows: `name`, else the subject (never an e-mail address). */
export function displayNameOf(claims: Readonly<Record<string, unknown>>, subject: string): string {
  const name = typeof claims.name === 'string' ? claims.name : '';
  // eslint-disable-next-line no-control-regex
  const clean = name.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean === '' || clean.includes('@') ? subject : clean.slice(0, MAX_NAME);
}

/** The console identity of verified ID token claims; a refusal when they give no role. */
export function identityOf(
  claims: Readonly<Record<string, unknown>>,
  rolesClaim: string,
): ConsoleIdentity {
  const subject = typeof claims.sub === 'string' ? claims.sub : '';
  if (subject === '') throw new OidcSignInFailed('token_rejected');
  const operator = displayNameOf(claims, subject);
  const role = roleOf(claimAt(claims, rolesClaim));
  if (role === undefined) throw new OidcSignInFailed('no_role', { subject, name: operator });
  return { operator, subject, verified: true, role };
}

export interface OidcClientOptions {
  /** The fetch openid-client uses (tests tamper with the provider's answers through it). */
  readonly fetch?: openid.CustomFetch;
}

export class ConsoleOidcClient {
  private configuration: Promise<openid.Configuration> | undefined;

  constructor(
    private readonly settings: ConsoleOidcSettings,
    private readonly options: OidcClientOptions = {},
  ) {}

  /** A fresh challenge and the provider's authorization URL for it. */
  async start(redirectUri: string): Promise<{ url: URL; challenge: OidcChallenge }> {
    const config = await this.config();
    const challenge: OidcChallenge = {
      state: openid.randomState(),
      nonce: openid.randomNonce(),
      codeVerifier: openid.randomPKCECodeVerifier(),
      redirectUri,
    };
    const url = openid.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile',
      response_type: 'code',
      state: challenge.state,
      nonce: challenge.nonce,
      code_challenge: await openid.calculatePKCECodeChallenge(challenge.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url, challenge };
  }

  /**
   * The identity of the person the provider sent back with `query` (the callback's
   * parameters), after every check; OidcSignInFailed when one fails.
   */
  async finish(query: URLSearchParams, challenge: OidcChallenge): Promise<ConsoleIdentity> {
    if (query.has('error')) throw new OidcSignInFailed('provider_error');
    const config = await this.config();
    const callback = new URL(challenge.redirectUri);
    callback.search = query.toString();
    let claims: openid.IDToken | undefined;
    try {
      const tokens = await openid.authorizationCodeGrant(config, callback, {
        expectedState: challenge.state,
        expectedNonce: challenge.nonce,
        pkceCodeVerifier: challenge.codeVerifier,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (error) {
      throw new OidcSignInFailed(
        unreachable(error) ? 'provider_unreachable' : 'token_rejected',
        null,
        error,
      );
    }
    if (claims === undefined) throw new OidcSignInFailed('token_rejected');
    return identityOf(claims, this.settings.rolesClaim);
  }

  /** The provider's configuration, discovered once (again after a failure). */
  private config(): Promise<openid.Configuration> {
    if (this.configuration === undefined) {
      const { issuer, clientId, clientSecret } = this.settings;
      const discovery = openid.discovery(
        new URL(issuer),
        clientId,
        undefined,
        openid.ClientSecretBasic(clientSecret),
        {
          ...(this.options.fetch === undefined ? {} : { [openid.customFetch]: this.options.fetch }),
          execute: [
            // The ID token's signature is checked against the provider's keys (JWKS), not
            // only trusted for having come over TLS from the token endpoint.
            openid.enableNonRepudiationChecks,
            // http:// only reaches this far for a loopback issuer (the configuration refuses
            // any other): a provider on the same machine, as in the tests.
            ...(issuer.startsWith('http://') ? [openid.allowInsecureRequests] : []),
          ],
          timeout: 10,
        },
      );
      this.configuration = discovery;
      discovery.catch(() => {
        if (this.configuration === discovery) this.configuration = undefined;
      });
    }
    return this.configuration.catch((error: unknown) => {
      throw new OidcSignInFailed('provider_unreachable', null, error);
    });
  }
}

/** Whether openid-client failed to reach the provider rather than refused what it sent. */
function unreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    code === 'OAUTH_TIMEOUT' ||
    code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' ||
    error.name === 'AbortError' ||
    error.name === 'TimeoutError' ||
    (error instanceof TypeError && /fetch failed/i.test(error.message))
  );
}
