/**
 * The console's sign-in state: the token check, the sessions, and the wrong-token
 * throttle, built from the console's options (one instance per worker).
 */
import { Inject, Injectable } from '@nestjs/common';
import { CONSOLE_OPTIONS, type ConsoleOptions } from '../console.options.js';
import { ConsoleToken } from './console-token.js';
import { SessionStore } from './session-store.js';
import { SignInThrottle } from './sign-in-throttle.js';

@Injectable()
export class ConsoleAuth {
  readonly token: ConsoleToken;
  readonly sessions: SessionStore;
  readonly throttle: SignInThrottle;
  /** Seconds the session cookie is kept by the browser (the session's longest life). */
  readonly cookieMaxAgeSeconds: number;

  constructor(@Inject(CONSOLE_OPTIONS) options: ConsoleOptions) {
    this.token = new ConsoleToken(options.token);
    this.sessions = new SessionStore({
      idleMs: options.sessionIdleMs,
      maxMs: options.sessionMaxMs,
    });
    this.throttle = new SignInThrottle(options.signInFailureLimit, options.signInWindowMs);
    this.cookieMaxAgeSeconds = Math.ceil(options.sessionMaxMs / 1000);
  }
}
