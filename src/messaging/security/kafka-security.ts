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
import { fileErrorCode } from '../../errors/file-error.js';
import { readFileSync } from 'node:fs';
import {
  ConfigError,
  type KafkaSaslMechanism,
  type KafkaSecurityConfig,
} from '../../config/app-config.js';
import type { Mechanism, SASLOptions } from 'kafkajs';
import { explainAccessFailure, type KafkaAccessError } from './kafka-access.js';
import {
  oauthBearerMechanism,
  OAuthBearerTokenSource,
  type OAuthBearerSettings,
} from './kafka-oauthbearer.js';

export { KafkaAccessError } from './kafka-access.js';

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
    throw new ConfigError(variable, `cannot be read (${file}: ${fileErrorCode(error)})`);
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
          clientSecretFile: config.KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE,
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
  sasl?: SASLOptions | Mechanism;
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
        ? { sasl: oauthBearerMechanism(sasl.tokens, describeKafkaIdentity(options)) }
        : { sasl: passwordSasl(sasl) }),
  };
}

function passwordSasl(sasl: Extract<KafkaSaslOptions, { readonly password: string }>): SASLOptions {
  const { username, password } = sasl;
  switch (sasl.mechanism) {
    case 'plain':
      return { mechanism: 'plain', username, password };
    case 'scram-sha-256':
      return { mechanism: 'scram-sha-256', username, password };
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', username, password };
  }
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

/**
 * Why the brokers refused this connection, as a KafkaAccessError, when the error says so;
 * undefined for anything else (a broker down, a time-out: those are worth retrying).
 */
export function explainKafkaAccessError(
  error: unknown,
  options: KafkaSecurityOptions,
): KafkaAccessError | undefined {
  const sasl = options.sasl;
  return explainAccessFailure(error, {
    identity: describeKafkaIdentity(options),
    ...(sasl === undefined ? {} : { mechanism: sasl.mechanism }),
    ...(options.tls?.ca === undefined ? {} : { caFile: options.tls.ca.file }),
    ...(options.tls?.clientCertificate === undefined
      ? {}
      : { certFile: options.tls.clientCertificate.cert.file }),
    secrets: sasl !== undefined && sasl.mechanism !== 'oauthbearer' ? [sasl.password] : [],
  });
}
