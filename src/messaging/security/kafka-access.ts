/**
 * Why the brokers would not let us in, in one line (KafkaAccessError): bad credentials, a
 * SASL mechanism the brokers do not enable, a certificate we do not trust, a client
 * certificate they refuse, a token endpoint that refuses us. Never with a secret in it.
 * kafka-security.ts says who we are (AccessContext); this reads kafkajs' and Node's errors.
 */
import { AppError } from '../../errors/app-error.js';

/** Who we are to the brokers and where our TLS material comes from (never a secret). */
export interface AccessContext {
  /** e.g. `SASL SCRAM-SHA-512, user worker`. */
  readonly identity: string;
  /** KAFKA_SASL_MECHANISM, when set. */
  readonly mechanism?: string;
  /** KAFKA_SSL_CA_FILE, when set. */
  readonly caFile?: string;
  /** KAFKA_SSL_CERT_FILE, when set. */
  readonly certFile?: string;
  /** Secrets to remove from any text the brokers or kafkajs give (never shown). */
  readonly secrets: readonly string[];
}

export type KafkaAccessFailure =
  | 'authentication_failed'
  | 'sasl_mechanism_not_enabled'
  | 'tls_untrusted'
  | 'tls_hostname_mismatch'
  | 'tls_certificate_expired'
  | 'tls_client_certificate_refused'
  | 'oauthbearer_token_failed'
  | 'security_protocol_mismatch';

/** The brokers would not let us in; retrying the same configuration will not help. */
export class KafkaAccessError extends AppError {
  readonly code: `kafka.${KafkaAccessFailure}`;
  readonly transient = false;
  /** Tells kafkajs' retrier not to retry it. */
  readonly retriable = false;

  constructor(
    readonly failure: KafkaAccessFailure,
    message: string,
    options: { cause?: unknown; identity: string },
  ) {
    super(message, {
      cause: options.cause,
      metadata: { failure, identity: options.identity },
    });
    this.code = `kafka.${failure}`;
  }
}

/** Node's codes for a server certificate it cannot chain to a trusted CA. */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REJECTED',
]);

/** OpenSSL alerts a server sends when it refuses the client's certificate (or its absence). */
const CLIENT_CERTIFICATE_REFUSED =
  /alert[ _](certificate[ _]required|bad[ _]certificate|unknown[ _]ca|handshake[ _]failure|certificate[ _]unknown|decrypt[ _]error|access[ _]denied|unsupported[ _]certificate)/i;

/** Every error of a kafkajs cause chain, outermost first. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < 10) {
    chain.push(current);
    current =
      current instanceof Error
        ? (current.cause ?? Reflect.get(current, 'originalError'))
        : undefined;
  }
  return chain;
}

/** Secrets we hold for the brokers, removed from any text before it is shown. */
function withoutSecrets(text: string, secrets: readonly string[]): string {
  return secrets
    .filter((secret) => secret.length > 0)
    .reduce((clean, secret) => clean.split(secret).join('***'), text);
}

/** The broker's reason after kafkajs' prefix (`SASL SCRAM SHA512 authentication failed: …`). */
function brokerReason(message: string): string {
  const reason = message.replace(/^SASL [A-Z0-9 -]+ authentication failed: /i, '');
  return reason.length > 300 ? `${reason.slice(0, 300)}…` : reason;
}

/** `TLS alert certificate unknown` out of OpenSSL's long line. */
function tlsAlert(message: string): string {
  const alert = /alert ([a-z ]+?)(?::|$)/i.exec(message);
  return alert === null ? brokerReason(message) : `TLS alert ${alert[1] ?? ''}`.trim();
}

/**
 * Why the brokers refused this connection, as a KafkaAccessError, when the error says so;
 * undefined for anything else (a broker down, a time-out: those are worth retrying).
 */
export function explainAccessFailure(
  error: unknown,
  context: AccessContext,
): KafkaAccessError | undefined {
  const identity = context.identity;
  for (const item of causeChain(error)) {
    if (item instanceof KafkaAccessError) return item;
    // kafka-oauthbearer.ts's KafkaTokenRequestError (by its code: that file imports this one).
    if (item instanceof AppError && item.code === 'kafka.oauthbearer_token_failed') {
      return new KafkaAccessError('oauthbearer_token_failed', item.message, {
        cause: error,
        identity,
      });
    }
    if (!(item instanceof Error)) continue;
    const code: unknown = Reflect.get(item, 'code');
    const message = withoutSecrets(item.message, context.secrets);
    const type: unknown = Reflect.get(item, 'type');
    if (
      type === 'UNSUPPORTED_SASL_MECHANISM' ||
      /SASL \S+ mechanism is not supported by the server/.test(message)
    ) {
      return new KafkaAccessError(
        'sasl_mechanism_not_enabled',
        `Kafka: the brokers do not accept SASL mechanism ` +
          `${context.mechanism?.toUpperCase() ?? '(none)'} ` +
          `(KAFKA_SASL_MECHANISM=${context.mechanism ?? 'unset'})`,
        { cause: error, identity },
      );
    }
    if (item.name === 'KafkaJSSASLAuthenticationError' || type === 'SASL_AUTHENTICATION_FAILED') {
      return new KafkaAccessError(
        'authentication_failed',
        `Kafka authentication failed (${identity}): ${brokerReason(message)}`,
        { cause: error, identity },
      );
    }
    if (typeof code === 'string' && UNTRUSTED.has(code)) {
      const ca = context.caFile;
      return new KafkaAccessError(
        'tls_untrusted',
        `Kafka TLS: the brokers' certificate is not trusted ` +
          `(${ca === undefined ? "the system's CAs; KAFKA_SSL_CA_FILE is not set" : `KAFKA_SSL_CA_FILE ${ca}`}): ${code}`,
        { cause: error, identity },
      );
    }
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      return new KafkaAccessError(
        'tls_hostname_mismatch',
        `Kafka TLS: the brokers' certificate is not for the host name we connect to (KAFKA_BROKERS): ${brokerReason(message)}`,
        { cause: error, identity },
      );
    }
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
      return new KafkaAccessError(
        'tls_certificate_expired',
        `Kafka TLS: the brokers' certificate is not valid now (${code})`,
        { cause: error, identity },
      );
    }
    if (
      CLIENT_CERTIFICATE_REFUSED.test(message) ||
      (typeof code === 'string' && CLIENT_CERTIFICATE_REFUSED.test(code))
    ) {
      const certificate = context.certFile;
      return new KafkaAccessError(
        'tls_client_certificate_refused',
        certificate === undefined
          ? 'Kafka TLS: the brokers require a client certificate (set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE)'
          : `Kafka TLS: the brokers refused our client certificate (KAFKA_SSL_CERT_FILE ` +
              `${certificate}): ${tlsAlert(message)}`,
        { cause: error, identity },
      );
    }
  }
  return undefined;
}

/** The brokers closed the connection (kafkajs' words for it), not refused or timed out. */
export function isClosedByBrokers(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current instanceof Error; depth += 1) {
    if (
      current.name === 'KafkaJSConnectionClosedError' ||
      /^(Closed connection|Connection closed by the server)$/.test(current.message)
    ) {
      return true;
    }
    current = current.cause ?? Reflect.get(current, 'originalError');
  }
  return false;
}

/**
 * Every connection closed by the brokers as soon as it opened: what a TLS listener does to a
 * plaintext client, and a SASL listener to a client that does not authenticate.
 */
export function securityProtocolMismatch(identity: string, attempts: number): KafkaAccessError {
  return new KafkaAccessError(
    'security_protocol_mismatch',
    `Kafka: the brokers closed the connection as soon as it opened, ${attempts} times ` +
      `(${identity}): does their listener expect TLS (KAFKA_SSL) or SASL (KAFKA_SASL_MECHANISM)?`,
    { identity },
  );
}
