/**
 * The console's settings: the token from CONSOLE_TOKEN (or CONSOLE_TOKEN_FILE), and the
 * session and sign-in limits, which are not environment variables (tests shorten them).
 */
export const CONSOLE_OPTIONS = Symbol('CONSOLE_OPTIONS');

export interface ConsoleOptions {
  /** The shared token an operator signs in with (at least 16 characters). */
  readonly token: string;
  /** A session ends this long after its last request (30 minutes). */
  readonly sessionIdleMs: number;
  /** A session ends this long after sign-in, however busy (8 hours). */
  readonly sessionMaxMs: number;
  /** Wrong tokens from one client within `signInWindowMs` before it must wait (5). */
  readonly signInFailureLimit: number;
  /** The window wrong tokens are counted in (1 minute). */
  readonly signInWindowMs: number;
}

/** What tests and the composition may change (never the token: that is configuration). */
export type ConsoleOverrides = Partial<Omit<ConsoleOptions, 'token'>>;

export function consoleOptions(token: string, overrides: ConsoleOverrides = {}): ConsoleOptions {
  return {
    token,
    sessionIdleMs: 30 * 60_000,
    sessionMaxMs: 8 * 60 * 60_000,
    signInFailureLimit: 5,
    signInWindowMs: 60_000,
    ...overrides,
  };
}

/** Where the console lives on the management port. */
export const CONSOLE_PREFIX = '/console';
