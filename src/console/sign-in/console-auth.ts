/**
 * The console's sign-in state: the token check (when a token is configured), the OpenID
 * provider's client and its sign-ins under way (when one is configured), the sessions, and
 * the failed sign-in throttle, built from the console's options (one instance per worker).
 */
import { Inject, Injectable } from '@nestjs/common';
import { CONSOLE_OPTIONS, type ConsoleOptions } from '../console.options.js';
import { ConsoleOidcClient } from '../oidc/oidc-client.js';
import { PendingSignIns } from '../oidc/pending-sign-ins.js';
import { ConsoleToken } from './console-token.js';
import { SessionStore } from './session-store.js';
import { SignInThrottle } from './sign-in-throttle.js';

@Injectable()
export class ConsoleAuth {
  /** Null when the console is only reached through the OpenID provider. */
  readonly token: ConsoleToken | null;
  /** Null when no OpenID provider is configured. */
  readonly oidc: ConsoleOidcClient | null;
  /** OpenID sign-ins on their way through the provider. */
  readonly pendingOidc: PendingSignIns;
  readonly sessions: SessionStore;
  readonly throttle: SignInThrottle;
  /** Seconds the session cookie is kept by the browser (the session's longest life). */
  readonly cookieMaxAgeSeconds: number;

  constructor(@Inject(CONSOLE_OPTIONS) options: ConsoleOptions) {
    this.token = options.token === null ? null : new ConsoleToken(options.token);
    this.oidc = options.oidc === null ? null : new ConsoleOidcClient(options.oidc);
    this.pendingOidc = new PendingSignIns(options.oidcPendingMs);
    this.sessions = new SessionStore({
      idleMs: options.sessionIdleMs,
      maxMs: options.sessionMaxMs,
    });
    this.throttle = new SignInThrottle({
      perClient: options.signInFailureLimit,
      global: options.signInGlobalFailureLimit,
      windowMs: options.signInWindowMs,
    });
    this.cookieMaxAgeSeconds = Math.ceil(options.sessionMaxMs / 1000);
  }
}
