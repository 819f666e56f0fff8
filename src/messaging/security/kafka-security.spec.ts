import { describe, expect, it } from '@jest/globals';
import { ConfigError, type KafkaSecurityConfig } from '../../config/app-config.js';
import { KafkaTokenRequestError, OAuthBearerTokenSource } from './kafka-oauthbearer.js';
import {
  describeKafkaIdentity,
  explainKafkaAccessError,
  kafkaSecurityFromConfig,
  kafkajsSecurity,
  type KafkaSecurityOptions,
} from './kafka-security.js';
import { saslExchange } from '../../../test/support/sasl-exchange.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB-ca\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nMIIB-client\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIGH-key\n-----END PRIVATE KEY-----\n';
const PASSWORD = 's3cret-Pa55word';

const files: Record<string, string> = {
  '/etc/kafka/ca.pem': CA,
  '/etc/kafka/client.crt': CERT,
  '/etc/kafka/client.key': KEY,
  '/etc/kafka/not-pem.txt': 'hello',
};

function read(path: string): string {
  const content = files[path];
  if (content === undefined) {
    throw Object.assign(new Error(`ENOENT: no such file, open '${path}'`), { code: 'ENOENT' });
  }
  return content;
}

const none: KafkaSecurityConfig = { KAFKA_SSL: false };

describe('kafkaSecurityFromConfig', () => {
  it('is empty without TLS or SASL (PLAINTEXT)', () => {
    const security = kafkaSecurityFromConfig(none, { read });
    expect(security).toEqual({});
    expect(kafkajsSecurity(security)).toEqual({});
    expect(describeKafkaIdentity(security)).toBe('PLAINTEXT, no authentication');
  });

  it('reads the CA, client certificate and key, and always verifies the brokers', () => {
    const security = kafkaSecurityFromConfig(
      {
        KAFKA_SSL: true,
        KAFKA_SSL_CA_FILE: '/etc/kafka/ca.pem',
        KAFKA_SSL_CERT_FILE: '/etc/kafka/client.crt',
        KAFKA_SSL_KEY_FILE: '/etc/kafka/client.key',
      },
      { read },
    );
    expect(kafkajsSecurity(security)).toEqual({
      ssl: { rejectUnauthorized: true, ca: [CA], cert: CERT, key: KEY },
    });
    expect(describeKafkaIdentity(security)).toBe('mutual TLS, certificate /etc/kafka/client.crt');
  });

  it("uses the system's CAs when no CA file is given, still verifying", () => {
    const security = kafkaSecurityFromConfig({ KAFKA_SSL: true }, { read });
    expect(kafkajsSecurity(security)).toEqual({ ssl: { rejectUnauthorized: true } });
  });

  it('names the variable of a file it cannot read, without its content', () => {
    const attempt = (): unknown =>
      kafkaSecurityFromConfig(
        {
          KAFKA_SSL: true,
          KAFKA_SSL_CA_FILE: '/etc/kafka/ca.pem',
          KAFKA_SSL_CERT_FILE: '/etc/kafka/client.crt',
          KAFKA_SSL_KEY_FILE: '/etc/kafka/missing.key',
        },
        { read },
      );
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      'Invalid configuration: KAFKA_SSL_KEY_FILE cannot be read (/etc/kafka/missing.key: ENOENT)',
    );
  });

  it('refuses a file that holds no PEM of the expected kind', () => {
    expect(() =>
      kafkaSecurityFromConfig(
        { KAFKA_SSL: true, KAFKA_SSL_CA_FILE: '/etc/kafka/not-pem.txt' },
        { read },
      ),
    ).toThrow('KAFKA_SSL_CA_FILE has no certificate in PEM (/etc/kafka/not-pem.txt)');
    expect(() =>
      kafkaSecurityFromConfig(
        {
          KAFKA_SSL: true,
          KAFKA_SSL_CERT_FILE: '/etc/kafka/client.crt',
          KAFKA_SSL_KEY_FILE: '/etc/kafka/client.crt',
        },
        { read },
      ),
    ).toThrow('KAFKA_SSL_KEY_FILE has no private key in PEM');
  });

  it.each(['plain', 'scram-sha-256', 'scram-sha-512'] as const)(
    'passes the %s credentials to kafkajs',
    (mechanism) => {
      const security = kafkaSecurityFromConfig(
        {
          KAFKA_SSL: false,
          KAFKA_SASL_MECHANISM: mechanism,
          KAFKA_SASL_USERNAME: 'worker',
          KAFKA_SASL_PASSWORD: PASSWORD,
        },
        { read },
      );
      expect(kafkajsSecurity(security)).toEqual({
        sasl: { mechanism, username: 'worker', password: PASSWORD },
      });
      expect(describeKafkaIdentity(security)).toBe(`SASL ${mechanism.toUpperCase()}, user worker`);
    },
  );

  it('gives kafkajs our OAUTHBEARER mechanism over the token source', async () => {
    const settings: unknown[] = [];
    const source = {
      provide: () => Promise.resolve({ value: 'header.payload.' }),
    } as unknown as OAuthBearerTokenSource;
    const security = kafkaSecurityFromConfig(
      {
        KAFKA_SSL: true,
        KAFKA_SASL_MECHANISM: 'oauthbearer',
        KAFKA_SASL_OAUTHBEARER_TOKEN_URL: 'https://idp.example/token',
        KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'bridge',
        KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: PASSWORD,
        KAFKA_SASL_OAUTHBEARER_SCOPE: 'kafka',
      },
      {
        read,
        tokenSource: (given) => {
          settings.push(given);
          return source;
        },
      },
    );
    expect(settings).toEqual([
      {
        tokenUrl: 'https://idp.example/token',
        clientId: 'bridge',
        clientSecret: PASSWORD,
        scope: 'kafka',
      },
    ]);
    const sasl = kafkajsSecurity(security).sasl;
    expect(sasl?.mechanism).toBe('OAUTHBEARER');
    if (sasl === undefined || !('authenticationProvider' in sasl)) throw new Error('no mechanism');
    const sent = await saslExchange(sasl);
    expect(sent[0]?.subarray(4).toString()).toBe(
      'n,,\u0001auth=Bearer header.payload.\u0001\u0001',
    );
    expect(describeKafkaIdentity(security)).toBe('SASL OAUTHBEARER, client bridge');
  });

  it('names a missing SASL credential', () => {
    expect(() =>
      kafkaSecurityFromConfig(
        { KAFKA_SSL: false, KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'w' },
        { read },
      ),
    ).toThrow('KAFKA_SASL_PASSWORD is required with KAFKA_SASL_MECHANISM=scram-sha-512');
  });
});

describe('explainKafkaAccessError', () => {
  const scram: KafkaSecurityOptions = {
    tls: { ca: { file: '/etc/kafka/ca.pem', pem: CA } },
    sasl: { mechanism: 'scram-sha-512', username: 'worker', password: PASSWORD },
  };
  const kafkajsError = (name: string, message: string, extra: object = {}): Error =>
    Object.assign(new Error(message), { name, ...extra });

  it('says which user failed to authenticate, never the password', () => {
    const error = kafkajsError(
      'KafkaJSSASLAuthenticationError',
      `SASL SCRAM SHA512 authentication failed: invalid credentials for worker (${PASSWORD})`,
    );
    const explained = explainKafkaAccessError(error, scram);
    expect(explained?.code).toBe('kafka.authentication_failed');
    expect(explained?.message).toBe(
      'Kafka authentication failed (SASL SCRAM-SHA-512, user worker): invalid credentials for worker (***)',
    );
    expect(JSON.stringify(explained)).not.toContain(PASSWORD);
  });

  it('finds the reason inside kafkajs wrappers', () => {
    const inner = kafkajsError(
      'KafkaJSProtocolError',
      'The broker does not support the requested SASL mechanism',
      { type: 'UNSUPPORTED_SASL_MECHANISM' },
    );
    const outer = kafkajsError('KafkaJSNumberOfRetriesExceeded', inner.message, { cause: inner });
    expect(explainKafkaAccessError(outer, scram)?.message).toBe(
      'Kafka: the brokers do not accept SASL mechanism SCRAM-SHA-512 (KAFKA_SASL_MECHANISM=scram-sha-512)',
    );
  });

  it('says the brokers’ certificate is not trusted, and by which CA file', () => {
    const error = kafkajsError(
      'KafkaJSConnectionError',
      'Connection error: unable to verify the first certificate',
      { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
    );
    expect(explainKafkaAccessError(error, scram)?.message).toBe(
      "Kafka TLS: the brokers' certificate is not trusted (KAFKA_SSL_CA_FILE /etc/kafka/ca.pem): UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    );
    expect(explainKafkaAccessError(error, { tls: {} })?.message).toContain(
      "the system's CAs; KAFKA_SSL_CA_FILE is not set",
    );
  });

  it('tells a missing client certificate from a refused one', () => {
    const required = kafkajsError(
      'KafkaJSConnectionError',
      'Connection error: …:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:…',
      { code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' },
    );
    expect(explainKafkaAccessError(required, { tls: {} })?.message).toBe(
      'Kafka TLS: the brokers require a client certificate (set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE)',
    );
    const refused = kafkajsError(
      'KafkaJSConnectionError',
      'Connection error: 80:error:0A000416:SSL routines:ssl3_read_bytes:sslv3 alert certificate unknown:../rec_layer_s3.c:1601:SSL alert number 46',
    );
    const mutual: KafkaSecurityOptions = {
      tls: {
        clientCertificate: {
          cert: { file: '/etc/kafka/client.crt', pem: CERT },
          key: { file: '/etc/kafka/client.key', pem: KEY },
        },
      },
    };
    const explained = explainKafkaAccessError(refused, mutual);
    expect(explained?.code).toBe('kafka.tls_client_certificate_refused');
    expect(explained?.message).toBe(
      'Kafka TLS: the brokers refused our client certificate (KAFKA_SSL_CERT_FILE /etc/kafka/client.crt): TLS alert certificate unknown',
    );
    expect(explained?.message).not.toContain(KEY);
  });

  it('passes a token endpoint failure on as an access failure', () => {
    const failure = new KafkaTokenRequestError(
      { tokenUrl: 'https://idp.example/token', clientId: 'bridge' },
      'HTTP 401: invalid_client',
      { transient: false, status: 401 },
    );
    const explained = explainKafkaAccessError(
      kafkajsError('KafkaJSNonRetriableError', failure.message, { cause: failure }),
      {},
    );
    expect(explained?.code).toBe('kafka.oauthbearer_token_failed');
    expect(explained?.message).toBe(
      'Kafka OAUTHBEARER token request failed (KAFKA_SASL_OAUTHBEARER_TOKEN_URL https://idp.example/token, client bridge): HTTP 401: invalid_client',
    );
  });

  it('leaves anything else alone (a broker down is worth retrying)', () => {
    const refused = kafkajsError(
      'KafkaJSConnectionError',
      'Connection error: connect ECONNREFUSED',
      {
        code: 'ECONNREFUSED',
      },
    );
    expect(explainKafkaAccessError(refused, scram)).toBeUndefined();
    expect(explainKafkaAccessError('not an error', scram)).toBeUndefined();
  });
});
