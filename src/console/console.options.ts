/**
 * The console's settings: how people sign in (the shared token from CONSOLE_TOKEN or
 * CONSOLE_TOKEN_FILE, the organization's OpenID provider from CONSOLE_OIDC_*, or both),
 * whether the browser sees HTTPS through a TLS proxy (CONSOLE_BEHIND_TLS_PROXY), and the
 * session and sign-in limits, which are not environment variables (tests shorten them).
 */
import type { AppConfig } from '../config/app-config.js';

export const CONSOLE_OPTIONS = Symbol('CONSOLE_OPTIONS');

/** The organization's OpenID provider (CONTRACT §10). */
export interface ConsoleOidcSettings {
  /** The issuer identifier, exactly as the provider's discovery document names it. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The ID token claim that lists the person's roles (`roles` by default). */
  readonly rolesClaim: string;
}

export interface ConsoleOptions {
  /** The shared token an operator signs in with (at least 16 characters); null: none. */
  readonly token: string | null;
  /** Sign-in through the organization's OpenID provider; null: none. */
  readonly oidc: ConsoleOidcSettings | null;
  /**
   * A TLS proxy in front of the management port terminates TLS (CONSOLE_BEHIND_TLS_PROXY):
   * the browser sees HTTPS although the request reached us in clear.
   */
  readonly behindTlsProxy: boolean;
  /** A session ends this long after its last request (30 minutes). */
  readonly sessionIdleMs: number;
  /** A session ends this long after sign-in, however busy (8 hours). */
  readonly sessionMaxMs: number;
  /** Failed sign-ins from one client within `signInWindowMs` before it must wait (5). */
  readonly signInFailureLimit: number;
  /** Failed sign-ins from all clients together within `signInWindowMs` before all wait (30). */
  readonly signInGlobalFailureLimit: number;
  /** The window failed sign-ins are counted in (1 minute). */
  readonly signInWindowMs: number;
  /** How long a started OpenID sign-in may take at the provider (10 minutes). */
  readonly oidcPendingMs: number;
}

/** What tests and the composition may change (never how people sign in: that is configuration). */
export type ConsoleOverrides = Partial<Omit<ConsoleOptions, 'token' | 'oidc' | 'behindTlsProxy'>>;

/** The configuration's part that says how people sign in to the console. */
export type ConsoleSignInConfig = Pick<
  AppConfig,
  | 'CONSOLE_TOKEN'
  | 'CONSOLE_OIDC_ISSUER'
  | 'CONSOLE_OIDC_CLIENT_ID'
  | 'CONSOLE_OIDC_CLIENT_SECRET'
  | 'CONSOLE_OIDC_ROLES_CLAIM'
  | 'CONSOLE_BEHIND_TLS_PROXY'
>;

export function consoleOptions(
  config: Partial<ConsoleSignInConfig>,
  overrides: ConsoleOverrides = {},
): ConsoleOptions {
  const { CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_ID, CONSOLE_OIDC_CLIENT_SECRET } = config;
  const oidc =
    CONSOLE_OIDC_ISSUER !== undefined &&
    CONSOLE_OIDC_CLIENT_ID !== undefined &&
    CONSOLE_OIDC_CLIENT_SECRET !== undefined
      ? {
          issuer: CONSOLE_OIDC_ISSUER,
          clientId: CONSOLE_OIDC_CLIENT_ID,
          clientSecret: CONSOLE_OIDC_CLIENT_SECRET,
          rolesClaim: config.CONSOLE_OIDC_ROLES_CLAIM ?? 'roles',
        }
      : null;
  return {
    token: config.CONSOLE_TOKEN ?? null,
    oidc,
    behindTlsProxy: config.CONSOLE_BEHIND_TLS_PROXY === true,
    sessionIdleMs: 30 * 60_000,
    sessionMaxMs: 8 * 60 * 60_000,
    signInFailureLimit: 5,
    signInGlobalFailureLimit: 30,
    signInWindowMs: 60_000,
    oidcPendingMs: 10 * 60_000,
    ...overrides,
  };
}

/** Where the console lives on the management port. */
export const CONSOLE_PREFIX = '/console';

/** Where the OpenID provider sends the browser back (registered with the provider). */
export const OIDC_CALLBACK_PATH = `${CONSOLE_PREFIX}/oidc/callback`;
