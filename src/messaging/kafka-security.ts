/**
 * TLS and SASL of the Kafka connection (CONTRACT §9), from the configuration: the CA, client
 * certificate and key files are read here, once, when the client options are built; the
 * SASL credentials or the OAUTHBEARER token source come with them. Certificate verification
 * is always on: nothing here, and no variable, turns `rejectUnauthorized` off.
 *
 * It also says, in one line, why the brokers would not let us in (explainKafkaAccessError):
 * bad credentials, a mechanism the brokers do not enable, a certificate we do not trust, a
 * client certificate they refuse. Never with a secret in it.
 */
import { readFileSync } from 'node:fs';
import { AppError } from '../common/app-error.js';
import {
  ConfigError,
  type KafkaSaslMechanism,
  type KafkaSecurityConfig,
} from '../config/app-config.js';
import {
  KafkaTokenRequestError,
  OAuthBearerTokenSource,
  type OAuthBearerSettings,
} from './kafka-oauthbearer.js';

/** A PEM file as read, with its path (for messages; the content never is in one). */
export interface PemFile {
  readonly file: string;
  readonly pem: string;
}

export interface KafkaTlsOptions {
  /** KAFKA_SSL_CA_FILE; absent: the system's CAs. */
  readonly ca?: PemFile;
  /** KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE (mutual TLS). */
  readonly clientCertificate?: { readonly cert: PemFile; readonly key: PemFile };
}

export type KafkaSaslOptions =
  | {
      readonly mechanism: Exclude<KafkaSaslMechanism, 'oauthbearer'>;
      readonly username: string;
      readonly password: string;
    }
  | {
      readonly mechanism: 'oauthbearer';
      /** KAFKA_SASL_OAUTHBEARER_CLIENT_ID (who we are, for messages). */
      readonly clientId: string;
      readonly tokens: OAuthBearerTokenSource;
    };

export interface KafkaSecurityOptions {
  /** KAFKA_SSL=true: TLS to the brokers. */
  readonly tls?: KafkaTlsOptions;
  readonly sasl?: KafkaSaslOptions;
}

type FileReader = (path: string) => string;

const readUtf8: FileReader = (path) => readFileSync(path, 'utf8');

export interface KafkaSecurityDeps {
  /** Reads a PEM file (tests). Default: fs, UTF-8. */
  readonly read?: FileReader;
  /** The OAUTHBEARER token source of these settings (to share one between clients). */
  readonly tokenSource?: (settings: OAuthBearerSettings) => OAuthBearerTokenSource;
}

/** Reads a PEM file of a variable: ConfigError naming the variable when it cannot. */
function readPem(
  variable: 'KAFKA_SSL_CA_FILE' | 'KAFKA_SSL_CERT_FILE' | 'KAFKA_SSL_KEY_FILE',
  file: string,
  expected: RegExp,
  what: string,
  read: FileReader,
): PemFile {
  let pem: string;
  try {
    pem = read(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(variable, `cannot be read (${file}: ${code})`);
  }
  if (!expected.test(pem)) throw new ConfigError(variable, `has no ${what} in PEM (${file})`);
  return { file, pem };
}

/** The TLS and SASL options of the configuration, its files read now. */
export function kafkaSecurityFromConfig(
  config: KafkaSecurityConfig,
  deps: KafkaSecurityDeps = {},
): KafkaSecurityOptions {
  return {
    ...(config.KAFKA_SSL ? { tls: tlsFromConfig(config, deps.read ?? readUtf8) } : {}),
    ...saslFromConfig(
      config,
      deps.tokenSource ?? ((settings) => new OAuthBearerTokenSource(settings)),
    ),
  };
}

function tlsFromConfig(config: KafkaSecurityConfig, read: FileReader): KafkaTlsOptions {
  const certificate = /-----BEGIN CERTIFICATE-----/;
  const ca =
    config.KAFKA_SSL_CA_FILE === undefined
      ? undefined
      : readPem('KAFKA_SSL_CA_FILE', config.KAFKA_SSL_CA_FILE, certificate, 'certificate', read);
  const certFile = config.KAFKA_SSL_CERT_FILE;
  const keyFile = config.KAFKA_SSL_KEY_FILE;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError(
      certFile === undefined ? 'KAFKA_SSL_CERT_FILE' : 'KAFKA_SSL_KEY_FILE',
      'must be set together with its pair (KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE)',
    );
  }
  const clientCertificate =
    certFile === undefined || keyFile === undefined
      ? undefined
      : {
          cert: readPem('KAFKA_SSL_CERT_FILE', certFile, certificate, 'certificate', read),
          key: readPem(
            'KAFKA_SSL_KEY_FILE',
            keyFile,
            /-----BEGIN (RSA |EC |ENCRYPTED )?PRIVATE KEY-----/,
            'private key',
            read,
          ),
        };
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(clientCertificate === undefined ? {} : { clientCertificate }),
  };
}

function required(
  config: KafkaSecurityConfig,
  name:
    | 'KAFKA_SASL_USERNAME'
    | 'KAFKA_SASL_PASSWORD'
    | 'KAFKA_SASL_OAUTHBEARER_TOKEN_URL'
    | 'KAFKA_SASL_OAUTHBEARER_CLIENT_ID'
    | 'KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET',
): string {
  const value = config[name];
  if (value === undefined) {
    throw new ConfigError(
      name,
      `is required with KAFKA_SASL_MECHANISM=${String(config.KAFKA_SASL_MECHANISM)}`,
    );
  }
  return value;
}

function saslFromConfig(
  config: KafkaSecurityConfig,
  tokenSource: (settings: OAuthBearerSettings) => OAuthBearerTokenSource,
): { sasl?: KafkaSaslOptions } {
  const mechanism = config.KAFKA_SASL_MECHANISM;
  if (mechanism === undefined) return {};
  if (mechanism === 'oauthbearer') {
    const clientId = required(config, 'KAFKA_SASL_OAUTHBEARER_CLIENT_ID');
    return {
      sasl: {
        mechanism,
        clientId,
        tokens: tokenSource({
          tokenUrl: required(config, 'KAFKA_SASL_OAUTHBEARER_TOKEN_URL'),
          clientId,
          clientSecret: required(config, 'KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET'),
          scope: config.KAFKA_SASL_OAUTHBEARER_SCOPE,
        }),
      },
    };
  }
  return {
    sasl: {
      mechanism,
      username: required(config, 'KAFKA_SASL_USERNAME'),
      password: required(config, 'KAFKA_SASL_PASSWORD'),
    },
  };
}

/** The kafkajs `ssl` and `sasl` of these options (verification always on). */
export function kafkajsSecurity(options: KafkaSecurityOptions): {
  ssl?: {
    rejectUnauthorized: true;
    ca?: string[];
    cert?: string;
    key?: string;
  };
  sasl?:
    | { mechanism: 'plain'; username: string; password: string }
    | { mechanism: 'scram-sha-256'; username: string; password: string }
    | { mechanism: 'scram-sha-512'; username: string; password: string }
    | { mechanism: 'oauthbearer'; oauthBearerProvider: () => Promise<{ value: string }> };
} {
  const tls = options.tls;
  const sasl = options.sasl;
  return {
    ...(tls === undefined
      ? {}
      : {
          ssl: {
            rejectUnauthorized: true,
            ...(tls.ca === undefined ? {} : { ca: [tls.ca.pem] }),
            ...(tls.clientCertificate === undefined
              ? {}
              : { cert: tls.clientCertificate.cert.pem, key: tls.clientCertificate.key.pem }),
          },
        }),
    ...(sasl === undefined
      ? {}
      : sasl.mechanism === 'oauthbearer'
        ? {
            sasl: {
              mechanism: 'oauthbearer' as const,
              oauthBearerProvider: async () => ({ value: (await sasl.tokens.provide()).value }),
            },
          }
        : {
            sasl: { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password },
          }),
  };
}

/** `SASL SCRAM-SHA-512, user worker`, `mutual TLS, CN from …`: who we are to the brokers. */
export function describeKafkaIdentity(options: KafkaSecurityOptions): string {
  const sasl = options.sasl;
  if (sasl !== undefined) {
    const mechanism = sasl.mechanism.toUpperCase();
    return sasl.mechanism === 'oauthbearer'
      ? `SASL ${mechanism}, client ${sasl.clientId}`
      : `SASL ${mechanism}, user ${sasl.username}`;
  }
  const certificate = options.tls?.clientCertificate;
  if (certificate !== undefined) return `mutual TLS, certificate ${certificate.cert.file}`;
  return options.tls === undefined ? 'PLAINTEXT, no authentication' : 'TLS, no authentication';
}

export type KafkaAccessFailure =
  | 'authentication_failed'
  | 'sasl_mechanism_not_enabled'
  | 'tls_untrusted'
  | 'tls_hostname_mismatch'
  | 'tls_certificate_expired'
  | 'tls_client_certificate_refused'
  | 'oauthbearer_token_failed';

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
function withoutSecrets(text: string, options: KafkaSecurityOptions): string {
  const sasl = options.sasl;
  const secrets = sasl !== undefined && sasl.mechanism !== 'oauthbearer' ? [sasl.password] : [];
  return secrets.reduce((clean, secret) => clean.split(secret).join('***'), text);
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
export function explainKafkaAccessError(
  error: unknown,
  options: KafkaSecurityOptions,
): KafkaAccessError | undefined {
  const identity = describeKafkaIdentity(options);
  for (const item of causeChain(error)) {
    if (item instanceof KafkaAccessError) return item;
    if (item instanceof KafkaTokenRequestError) {
      return new KafkaAccessError('oauthbearer_token_failed', item.message, {
        cause: error,
        identity,
      });
    }
    if (!(item instanceof Error)) continue;
    const code: unknown = Reflect.get(item, 'code');
    const message = withoutSecrets(item.message, options);
    const type: unknown = Reflect.get(item, 'type');
    if (
      type === 'UNSUPPORTED_SASL_MECHANISM' ||
      /SASL \S+ mechanism is not supported by the server/.test(message)
    ) {
      return new KafkaAccessError(
        'sasl_mechanism_not_enabled',
        `Kafka: the brokers do not accept SASL mechanism ` +
          `${options.sasl?.mechanism.toUpperCase() ?? '(none)'} ` +
          `(KAFKA_SASL_MECHANISM=${options.sasl?.mechanism ?? 'unset'})`,
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
      const ca = options.tls?.ca;
      return new KafkaAccessError(
        'tls_untrusted',
        `Kafka TLS: the brokers' certificate is not trusted ` +
          `(${ca === undefined ? "the system's CAs; KAFKA_SSL_CA_FILE is not set" : `KAFKA_SSL_CA_FILE ${ca.file}`}): ${code}`,
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
      const certificate = options.tls?.clientCertificate;
      return new KafkaAccessError(
        'tls_client_certificate_refused',
        certificate === undefined
          ? 'Kafka TLS: the brokers require a client certificate (set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE)'
          : `Kafka TLS: the brokers refused our client certificate (KAFKA_SSL_CERT_FILE ` +
              `${certificate.cert.file}): ${tlsAlert(message)}`,
        { cause: error, identity },
      );
    }
  }
  return undefined;
}
