/**
 * "Nothing in clear" (issue 27, part 3): the start-up rules that refuse a configuration
 * which would send a secret or personal data over an unencrypted connection to another
 * machine. Each rule gives the variable and the problem; app-config.ts throws them as a
 * ConfigError, one line naming the variable and never a value.
 *
 * - `http://` in a PAYFLOW_*_URL or KAFKA_SASL_OAUTHBEARER_TOKEN_URL is refused unless its
 *   host is loopback (the schema's `httpsUnlessLoopback`: the sandbox of the demo and the
 *   tests runs on 127.0.0.1 over http).
 * - SASL PLAIN sends the password itself, OAUTHBEARER a bearer token: both need KAFKA_SSL
 *   (SCRAM never sends the password, so it is allowed on a plain listener).
 * - The management port: its TLS files come together; the console (which carries a sign-in
 *   and its session cookie) refuses plain HTTP on an address other than loopback, unless
 *   CONSOLE_BEHIND_TLS_PROXY says that a TLS proxy in front of it terminates TLS.
 */
import { isIP } from 'node:net';

/** A rule broken: the variable to name and what is wrong (app-config.ts throws it as a ConfigError). */
export interface ClearTextViolation {
  readonly variable: string;
  readonly problem: string;
}

/** 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z) and `localhost` (and `*.localhost`, RFC 6761). */
export function isLoopbackHost(host: string): boolean {
  const name = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  if (isIP(name) === 6) {
    if (name === '::1' || name === '0:0:0:0:0:0:0:1') return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(name);
    return mapped?.[1] !== undefined && mapped[1].startsWith('127.');
  }
  return false;
}

/** Whether `url` is plain http:// to a host that is not loopback (what is refused). */
export function isClearTextToRemote(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false; // The URL's own rule says what is wrong with it.
  }
  return parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname);
}

export const CLEAR_TEXT_URL_MESSAGE =
  'must be an https:// URL: plain http:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost)';

/** The variables the Kafka SASL rule reads. */
export interface KafkaClearTextConfig {
  readonly KAFKA_SSL: boolean;
  readonly KAFKA_SASL_MECHANISM?: string | undefined;
}

/** SASL PLAIN (the password) and OAUTHBEARER (a bearer token) only over TLS. */
export function kafkaSaslInClear(config: KafkaClearTextConfig): ClearTextViolation | undefined {
  const mechanism = config.KAFKA_SASL_MECHANISM;
  if (config.KAFKA_SSL || (mechanism !== 'plain' && mechanism !== 'oauthbearer')) return undefined;
  const what = mechanism === 'plain' ? 'the password' : 'a bearer token';
  return {
    variable: 'KAFKA_SASL_MECHANISM',
    problem: `is ${mechanism}, which sends ${what} in clear without TLS: set KAFKA_SSL=true (or use scram-sha-256 or scram-sha-512)`,
  };
}

/** The variables the management-port rules read. */
export interface ManagementTlsConfig {
  readonly MANAGEMENT_HOST: string;
  readonly MANAGEMENT_TLS_CERT_FILE?: string | undefined;
  readonly MANAGEMENT_TLS_KEY_FILE?: string | undefined;
  readonly CONSOLE_BEHIND_TLS_PROXY: boolean;
  readonly CONSOLE_TOKEN?: string | undefined;
  /** OpenID sign-in (CONTRACT §10), when the configuration has it: it enables the console too. */
  readonly CONSOLE_OIDC_ISSUER?: string | undefined;
}

/** Whether the configuration turns the console on (a token, or an OpenID provider). */
export function consoleEnabled(
  config: Pick<ManagementTlsConfig, 'CONSOLE_TOKEN' | 'CONSOLE_OIDC_ISSUER'>,
): boolean {
  return config.CONSOLE_TOKEN !== undefined || config.CONSOLE_OIDC_ISSUER !== undefined;
}

/**
 * MANAGEMENT_TLS_CERT_FILE with MANAGEMENT_TLS_KEY_FILE or neither; the console only over
 * TLS (its own, or a proxy's) or on loopback.
 */
export function managementInClear(config: ManagementTlsConfig): ClearTextViolation | undefined {
  const cert = config.MANAGEMENT_TLS_CERT_FILE !== undefined;
  const key = config.MANAGEMENT_TLS_KEY_FILE !== undefined;
  if (cert !== key) {
    return {
      variable: cert ? 'MANAGEMENT_TLS_KEY_FILE' : 'MANAGEMENT_TLS_CERT_FILE',
      problem:
        'must be set together with its pair (MANAGEMENT_TLS_CERT_FILE and MANAGEMENT_TLS_KEY_FILE)',
    };
  }
  if (
    consoleEnabled(config) &&
    !cert &&
    !config.CONSOLE_BEHIND_TLS_PROXY &&
    !isLoopbackHost(config.MANAGEMENT_HOST)
  ) {
    return {
      variable: 'MANAGEMENT_HOST',
      problem:
        'is not loopback and the management port is plain HTTP: the console refuses to start ' +
        '(set MANAGEMENT_TLS_CERT_FILE and MANAGEMENT_TLS_KEY_FILE, or CONSOLE_BEHIND_TLS_PROXY=true behind a TLS proxy)',
    };
  }
  return undefined;
}
