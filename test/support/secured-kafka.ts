/**
 * The worker on the secured test bed (testbed/kafka/secured-cluster.ts): topics of one case
 * created by the admin, the worker's configuration for one identity (SCRAM, PLAIN, mutual
 * TLS, OAUTHBEARER) with its CA, and an OAuth client-credentials endpoint of the test's own
 * that issues unsecured JWTs (`alg: none`, `sub`, `exp`) as Kafka's default validator takes.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Kafka } from 'kafkajs';
import type { KafkaAclConfig } from '../../src/messaging/security/kafka-acls.js';
import type { SecuredKafkaCluster } from '../../testbed/kafka/secured-cluster.js';
import type { TopicSet } from './kafka-test-bed.js';
import { topicSetFor } from './kafka-test-bed.js';

/** The ACL configuration of a topic set and group. */
export function aclConfigOf(topics: TopicSet, groupId: string): KafkaAclConfig {
  return {
    KAFKA_GROUP_ID: groupId,
    TOPIC_ORDERS: topics.orders,
    TOPIC_PAYMENT_STATUS: topics.status,
    TOPIC_SETTLEMENTS: topics.settlements,
  };
}

/** A topic set (3 partitions each) and a group name, created as the admin. */
export async function securedTopicSet(
  kafka: SecuredKafkaCluster,
  label: string,
): Promise<{ topics: TopicSet; groupId: string }> {
  const topics = topicSetFor(label);
  await kafka.createTopics([topics.orders, topics.dlq, topics.status, topics.settlements], 3);
  return { topics, groupId: `payflow-bridge-${label}-${randomUUID().slice(0, 8)}` };
}

/** A kafkajs client of the super user (to publish orders and read what the worker wrote). */
export function adminKafka(kafka: SecuredKafkaCluster): Kafka {
  return new Kafka(kafka.adminConfig(`secured-test-${randomUUID().slice(0, 6)}`));
}

export type SecuredIdentity =
  | {
      readonly kind: 'sasl';
      readonly mechanism: string;
      readonly user: string;
      readonly password: string;
    }
  | { readonly kind: 'mtls'; readonly certFile: string; readonly keyFile: string }
  | {
      readonly kind: 'oauthbearer';
      readonly tokenUrl: string;
      readonly clientId: string;
      readonly clientSecret: string;
    };

/** The worker's Kafka variables for one identity on the secured cluster. */
export function securedKafkaEnvironment(
  kafka: SecuredKafkaCluster,
  identity: SecuredIdentity,
  caFile: string = kafka.caFile,
): Record<string, string> {
  const tls = { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: caFile };
  switch (identity.kind) {
    case 'sasl':
      return {
        ...tls,
        KAFKA_BROKERS: kafka.brokers.saslSsl.join(','),
        KAFKA_SASL_MECHANISM: identity.mechanism,
        KAFKA_SASL_USERNAME: identity.user,
        KAFKA_SASL_PASSWORD: identity.password,
      };
    case 'mtls':
      return {
        ...tls,
        KAFKA_BROKERS: kafka.brokers.ssl.join(','),
        KAFKA_SSL_CERT_FILE: identity.certFile,
        KAFKA_SSL_KEY_FILE: identity.keyFile,
      };
    case 'oauthbearer':
      return {
        ...tls,
        KAFKA_BROKERS: kafka.brokers.saslSsl.join(','),
        KAFKA_SASL_MECHANISM: 'oauthbearer',
        KAFKA_SASL_OAUTHBEARER_TOKEN_URL: identity.tokenUrl,
        KAFKA_SASL_OAUTHBEARER_CLIENT_ID: identity.clientId,
        KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: identity.clientSecret,
        KAFKA_SASL_OAUTHBEARER_SCOPE: 'kafka',
      };
  }
}

/** One token the endpoint issued. */
export interface IssuedToken {
  readonly sub: string;
  /** Epoch ms it was issued at and expires at (its `exp`). */
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export interface TokenEndpoint {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Every token issued so far, in order. */
  readonly issued: readonly IssuedToken[];
  /** Requests refused (wrong client or secret). */
  readonly refused: number;
  close(): Promise<void>;
}

/** An unsecured JWS (RFC 7515 with `alg: none`), as Kafka's unsecured validator reads it. */
export function unsecuredJwt(sub: string, issuedAtMs: number, lifetimeSeconds: number): string {
  const encode = (value: object): string =>
    Buffer.from(JSON.stringify(value)).toString('base64url');
  const iat = Math.floor(issuedAtMs / 1000);
  return `${encode({ alg: 'none' })}.${encode({ sub, iat, exp: iat + lifetimeSeconds, scope: 'kafka' })}.`;
}

/**
 * A client-credentials token endpoint (`POST /token`, HTTP Basic, form body) for one client,
 * issuing tokens for principal `sub` that live `lifetimeSeconds`.
 */
export async function startTokenEndpoint(options: {
  readonly sub: string;
  readonly lifetimeSeconds: number;
  readonly clientId?: string;
  readonly clientSecret?: string;
  /** Issue tokens whose `exp` has passed already (the brokers refuse them). */
  readonly expired?: boolean;
}): Promise<TokenEndpoint> {
  const clientId = options.clientId ?? 'payflow-bridge';
  const clientSecret = options.clientSecret ?? `secret-${randomUUID()}`;
  const issued: IssuedToken[] = [];
  let refused = 0;
  const expected = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const form = new URLSearchParams(body);
      if (
        request.method !== 'POST' ||
        request.headers.authorization !== expected ||
        form.get('grant_type') !== 'client_credentials'
      ) {
        refused += 1;
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: 'invalid_client' }));
        return;
      }
      const now = Date.now();
      const iat = Math.floor(now / 1000) * 1000;
      issued.push({
        sub: options.sub,
        issuedAt: now,
        expiresAt: iat + options.lifetimeSeconds * 1000,
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          access_token: unsecuredJwt(
            options.sub,
            options.expired === true ? now - 2 * options.lifetimeSeconds * 1000 : now,
            options.lifetimeSeconds,
          ),
          token_type: 'Bearer',
          expires_in: options.lifetimeSeconds,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/token`,
    clientId,
    clientSecret,
    issued,
    get refused() {
      return refused;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
