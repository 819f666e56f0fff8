/** CONSOLE_*: the operator console and its sign-in. */
import { z } from 'zod';
import { boolean } from '../env-values.js';
import { ConfigError } from '../config-error.js';
import { CLEAR_TEXT_URL_MESSAGE, isClearTextToRemote } from '../transport-security.js';

export const consoleEnv = z.object({
  /**
   * A TLS-terminating proxy stands in front of the management port: the console may run on
   * plain HTTP bound to an address other than loopback, and its cookies are Secure.
   */
  CONSOLE_BEHIND_TLS_PROXY: boolean.default(false),
  /** Unset: no console. Set: /console on the management port, signed in with this token. */
  CONSOLE_TOKEN: z
    .string()
    .min(16, { message: 'must be at least 16 characters (a long random token)' })
    .optional(),
  /**
   * Console sign-in through the organization's OpenID provider (CONTRACT §10): its issuer
   * URL, this console's client id and secret, and the ID token claim that lists the roles
   * (`viewer`, `operator`). The first three are set together or not at all.
   */
  CONSOLE_OIDC_ISSUER: z
    .string()
    .url({ message: 'must be an absolute URL' })
    // Kept exactly as given: the provider's discovery document must name the same issuer.
    .refine((value) => /^https?:\/\//.test(value), { message: 'must be an http(s) URL' })
    .refine((value) => !isClearTextToRemote(value), { message: CLEAR_TEXT_URL_MESSAGE })
    .optional(),
  CONSOLE_OIDC_CLIENT_ID: z.string().min(1).optional(),
  CONSOLE_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  CONSOLE_OIDC_ROLES_CLAIM: z.string().min(1).default('roles'),
});

/** The console's OpenID provider: issuer, client id and client secret, all three or none. */
export function checkConsoleOidc(
  config: Pick<
    z.output<typeof consoleEnv>,
    'CONSOLE_OIDC_ISSUER' | 'CONSOLE_OIDC_CLIENT_ID' | 'CONSOLE_OIDC_CLIENT_SECRET'
  >,
): void {
  const names = [
    'CONSOLE_OIDC_ISSUER',
    'CONSOLE_OIDC_CLIENT_ID',
    'CONSOLE_OIDC_CLIENT_SECRET',
  ] as const;
  const set = names.filter((name) => config[name] !== undefined);
  const missing = names.find((name) => config[name] === undefined);
  if (set.length > 0 && missing !== undefined) {
    throw new ConfigError(missing, `is required with ${set.join(', ')} (OpenID sign-in)`);
  }
}
