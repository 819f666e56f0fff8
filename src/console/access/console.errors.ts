/**
 * What stops a console request before its handler: no session (to the sign-in page), a
 * POST without its CSRF token (403), too many wrong tokens (429). The console's exception
 * filter answers each.
 */
import { AppError } from '../../errors/app-error.js';
import type { ConsoleRole } from '../sign-in/session-store.js';
import type { ThrottleScope } from '../sign-in/sign-in-throttle.js';

export class SignInRequired extends AppError {
  readonly code = 'CONSOLE.SIGN_IN_REQUIRED';
  readonly transient = false;

  constructor(readonly next: string) {
    super('sign in to the console first');
  }
}

export class CsrfRejected extends AppError {
  readonly code = 'CONSOLE.CSRF_REJECTED';
  readonly transient = false;

  constructor() {
    super('the form was not sent by this console session (missing or wrong CSRF token)');
  }
}

export class SignInThrottled extends AppError {
  readonly code = 'CONSOLE.SIGN_IN_THROTTLED';
  readonly transient = true;

  constructor(
    readonly retryAfterSeconds: number,
    /** `client`: this address failed too often; `everyone`: all clients together did. */
    readonly scope: ThrottleScope = 'client',
  ) {
    super(
      scope === 'client'
        ? 'too many failed sign-ins from this address; wait a minute'
        : 'too many failed sign-ins to the console from all addresses; wait a minute',
    );
  }
}

/** A viewer (read only) tried to act: 403, nothing changes (recorded as `action_refused`). */
export class ActionForbidden extends AppError {
  readonly code = 'CONSOLE.ACTION_FORBIDDEN';
  readonly transient = false;

  constructor(readonly role: ConsoleRole) {
    super(`the role ${role} may read but not act`);
  }
}

/** Why an OpenID sign-in did not open a session (a stable reason, recorded in the audit). */
export const OIDC_FAILURES = [
  /** The callback's query is not an authorization response (zod). */
  'bad_callback',
  /** No started sign-in in this browser (no cookie, or it ended, or another's). */
  'no_pending_sign_in',
  /** The provider answered with an error (the person cancelled, or was refused there). */
  'provider_error',
  /** openid-client refused the response or the ID token: state, nonce, PKCE, signature, expiry. */
  'token_rejected',
  /** The provider could not be reached (discovery, token endpoint, keys). */
  'provider_unreachable',
  /** The ID token is fine but its roles claim names neither `viewer` nor `operator`. */
  'no_role',
] as const;
export type OidcFailureReason = (typeof OIDC_FAILURES)[number];

export class OidcSignInFailed extends AppError {
  readonly code = 'CONSOLE.OIDC_SIGN_IN_FAILED';
  readonly transient = false;

  constructor(
    readonly reason: OidcFailureReason,
    /** Whom the provider named, when it got that far (recorded, never shown to others). */
    readonly identity: { readonly subject: string; readonly name: string } | null = null,
    cause?: unknown,
  ) {
    super(`the OpenID sign-in failed: ${reason}`, cause === undefined ? {} : { cause });
  }

  /** 403 when the person is known but has no role; 502 when the provider is down; else 401. */
  get status(): number {
    if (this.reason === 'no_role') return 403;
    if (this.reason === 'provider_unreachable') return 502;
    return 401;
  }
}
