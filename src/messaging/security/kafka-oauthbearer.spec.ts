import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KafkaAccessError } from './kafka-access.js';
import {
  KafkaTokenRequestError,
  OAuthBearerTokenSource,
  currentSecret,
  oauthBearerMechanism,
  requestClientCredentialsToken,
} from './kafka-oauthbearer.js';
import { saslExchange } from '../../../test/support/sasl-exchange.js';

const SECRET = 'client-secret:with/odd&chars';

interface Seen {
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly body: URLSearchParams;
}

let server: Server;
let url: string;
const seen: Seen[] = [];
/** What the next requests are answered with. */
let answer: { status: number; body: unknown } = { status: 200, body: {} };
let issued = 0;

async function bodyOf(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return text;
}

beforeAll(async () => {
  server = createServer((request, response) => {
    void bodyOf(request).then((text) => {
      seen.push({
        authorization: request.headers.authorization,
        contentType: request.headers['content-type'],
        body: new URLSearchParams(text),
      });
      issued += 1;
      const body =
        answer.body === 'token'
          ? { access_token: `token-${issued}`, token_type: 'bearer', expires_in: 20 }
          : answer.body;
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token?tenant=x`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const settings = (scope?: string) => ({
  tokenUrl: url,
  clientId: 'bridge',
  clientSecret: SECRET,
  ...(scope === undefined ? {} : { scope }),
});

describe('requestClientCredentialsToken', () => {
  it('asks with a form body and HTTP Basic, and validates the answer', async () => {
    answer = { status: 200, body: 'token' };
    seen.length = 0;
    const token = await requestClientCredentialsToken(settings('kafka.produce'));
    expect(token).toEqual({
      accessToken: expect.stringMatching(/^token-\d+$/),
      expiresInSeconds: 20,
    });
    const request = seen[0];
    expect(request?.contentType).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(request?.body ?? [])).toEqual({
      grant_type: 'client_credentials',
      scope: 'kafka.produce',
    });
    const basic = Buffer.from(
      (request?.authorization ?? '').replace(/^Basic /, ''),
      'base64',
    ).toString();
    expect(basic).toBe(`bridge:${encodeURIComponent(SECRET)}`);
  });

  it('reads a secret from a file again for every token request (rotation without a restart)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pfb-oauth-secret-'));
    const file = join(dir, 'secret');
    const basicOf = (index: number): string =>
      Buffer.from((seen[index]?.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
    try {
      answer = { status: 200, body: 'token' };
      seen.length = 0;
      writeFileSync(file, 'first-secret\n');
      const fromFile = { ...settings(), clientSecret: 'first-secret', clientSecretFile: file };
      await requestClientCredentialsToken(fromFile);
      writeFileSync(file, 'rotated-secret\n');
      await requestClientCredentialsToken(fromFile);
      // A file being replaced (gone or empty for a moment): the secret read at start-up.
      rmSync(file);
      await requestClientCredentialsToken(fromFile);
      writeFileSync(file, '');
      await requestClientCredentialsToken(fromFile);
      expect([0, 1, 2, 3].map(basicOf)).toEqual([
        'bridge:first-secret',
        'bridge:rotated-secret',
        'bridge:first-secret',
        'bridge:first-secret',
      ]);
      expect(currentSecret({ clientSecret: 'given' })).toBe('given');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sends no scope when none is configured', async () => {
    answer = { status: 200, body: 'token' };
    seen.length = 0;
    await requestClientCredentialsToken(settings());
    expect(seen[0]?.body.has('scope')).toBe(false);
  });

  it('refuses an answer that is not a bearer token, naming the fields', async () => {
    answer = { status: 200, body: { access_token: '', token_type: 'mac' } };
    const failure = requestClientCredentialsToken(settings());
    await expect(failure).rejects.toBeInstanceOf(KafkaTokenRequestError);
    await expect(failure).rejects.toThrow(
      /the answer is not a token answer \(access_token, token_type\)$/,
    );
  });

  it('reports a refused client as permanent, without the secret or the query', async () => {
    answer = { status: 401, body: { error: 'invalid_client', error_description: 'bad secret' } };
    const error = await requestClientCredentialsToken(settings()).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(KafkaTokenRequestError);
    const refused = error as KafkaTokenRequestError;
    expect(refused.message).toBe(
      `Kafka OAUTHBEARER token request failed (KAFKA_SASL_OAUTHBEARER_TOKEN_URL ${url.replace('?tenant=x', '')}, client bridge): HTTP 401: invalid_client (bad secret)`,
    );
    expect(refused.transient).toBe(false);
    expect(refused.retriable).toBe(false);
    expect(JSON.stringify(refused)).not.toContain(SECRET);
  });

  it('reports an endpoint in trouble as transient (kafkajs may retry)', async () => {
    answer = { status: 503, body: 'busy' };
    const error = await requestClientCredentialsToken(settings()).catch(
      (caught: unknown) => caught,
    );
    expect((error as KafkaTokenRequestError).retriable).toBe(true);
    expect((error as Error).message).toMatch(/HTTP 503: no OAuth error in the answer$/);
  });

  it('reports an endpoint that does not answer', async () => {
    const error = await requestClientCredentialsToken({
      ...settings(),
      tokenUrl: 'http://127.0.0.1:9/token',
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KafkaTokenRequestError);
    expect((error as KafkaTokenRequestError).transient).toBe(true);
  });
});

describe('OAuthBearerTokenSource', () => {
  it('answers from its cache, and fetches a new token before the old one expires', async () => {
    answer = { status: 200, body: 'token' };
    let now = 1_000_000;
    const source = new OAuthBearerTokenSource({ ...settings(), now: () => now });
    const first = await source.provide();
    expect(await source.provide()).toEqual(first);
    expect(source.fetchCount).toBe(1);
    // 20 s tokens are refreshed at half their lifetime, well before they expire.
    now += 9_000;
    expect(await source.provide()).toEqual(first);
    now += 2_000;
    const second = await source.provide();
    expect(second.value).not.toBe(first.value);
    expect(source.fetchCount).toBe(2);
  });

  it('asks once however many connections wait for a token', async () => {
    answer = { status: 200, body: 'token' };
    const source = new OAuthBearerTokenSource(settings());
    const tokens = await Promise.all([source.provide(), source.provide(), source.provide()]);
    expect(new Set(tokens.map((token) => token.value)).size).toBe(1);
    expect(source.fetchCount).toBe(1);
  });
});

describe('oauthBearerMechanism', () => {
  const TOKEN = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ3b3JrZXIifQ.';
  const source = { provide: () => Promise.resolve({ value: TOKEN }) } as OAuthBearerTokenSource;

  /** Runs the mechanism against a server that answers `challenge` to the initial response. */
  async function authenticate(challenge: string): Promise<Buffer[]> {
    const mechanism = oauthBearerMechanism(source, 'SASL OAUTHBEARER, client bridge');
    expect(mechanism.mechanism).toBe('OAUTHBEARER');
    return saslExchange(mechanism, challenge);
  }

  it('sends the RFC 7628 initial response with the token, as Kafka BYTES', async () => {
    const [sent] = await authenticate('');
    const message = `n,,\u0001auth=Bearer ${TOKEN}\u0001\u0001`;
    expect(sent?.readInt32BE(0)).toBe(Buffer.byteLength(message));
    expect(sent?.subarray(4).toString()).toBe(message);
  });

  it('fails at once, saying why, when the brokers answer with an error challenge', async () => {
    const failure = await authenticate('{"status":"invalid_token"}').catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(KafkaAccessError);
    expect((failure as KafkaAccessError).retriable).toBe(false);
    expect((failure as Error).message).toBe(
      'Kafka authentication failed (SASL OAUTHBEARER, client bridge): the brokers refused the token (status invalid_token)',
    );
    expect((failure as Error).message).not.toContain(TOKEN);
  });
});
