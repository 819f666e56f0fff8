import { setMaxListeners } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../logging/logger.js';
import { PayflowAuth, isInvalidClient, type RequestToken } from './payflow.auth.js';
import type { Credentials, HttpCall } from '../http/payflow.call.js';
import { ClientSecret } from './payflow.client-secret.js';
import { errorForStatus } from '../http/payflow.error-mapping.js';
import { PayflowError } from '../payflow.errors.js';
import type { TokenResponse } from '../wire/payflow.schemas.js';

const ANY_CALL = {} as HttpCall;

/** A call of the client's as the transport hands it to the credentials. */
function callOf(auth: PayflowAuth): HttpCall {
  return {
    endpoint: { name: 'createPayment', method: 'POST', idempotent: false },
    base: { origin: 'http://payflow.test', prefix: '' },
    path: '/api/payments',
    accept: 'application/json',
    credentials: auth,
  };
}

/** The token endpoint's answer to a refused client, as the transport turns it into an error. */
function refused(status: number, error: string): PayflowError {
  return errorForStatus({
    endpoint: 'token',
    method: 'POST',
    status,
    body: { error },
    retryAfterMs: undefined,
  });
}

/** The secret of an HTTP Basic header. */
async function secretOf(credentials: Credentials): Promise<string> {
  const { header } = await credentials.authorize(ANY_CALL);
  const decoded = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString('utf8');
  return decodeURIComponent(decoded.slice(decoded.indexOf(':') + 1));
}

interface Fixture {
  readonly auth: PayflowAuth;
  readonly secret: ClientSecret;
  /** The secret of each token request, in order. */
  readonly sent: string[];
  /** What the secret file holds now. */
  file: string;
  reads: number;
}

/**
 * A PayflowAuth whose token endpoint accepts only `accepted` (else `refusal`), with a secret
 * that came from a file (or not) holding `file`.
 */
function fixture(options: {
  readonly accepted: string;
  readonly fromFile?: boolean;
  readonly refusal?: () => PayflowError;
  /** Held until released: many callers wait on one request. */
  readonly gate?: Promise<void>;
}): Fixture {
  const state = { file: 'old-secret', reads: 0 };
  const secret = new ClientSecret({
    clientId: 'erp',
    clientSecret: 'old-secret',
    clientSecretFile: options.fromFile === false ? undefined : '/run/secrets/payflow',
    logger: silentLogger(),
    readFile: () => {
      state.reads += 1;
      return Promise.resolve(`${state.file}\n`);
    },
  });
  const sent: string[] = [];
  let issued = 0;
  const requestToken: RequestToken = async (_scopes, _signal, credentials) => {
    const used = await secretOf(credentials);
    sent.push(used);
    await options.gate;
    if (used !== options.accepted) {
      throw (options.refusal ?? (() => refused(401, 'invalid_client')))();
    }
    issued += 1;
    const answer: TokenResponse = {
      access_token: `token-${issued}`,
      token_type: 'Bearer',
      expires_in: 3600,
    };
    return answer;
  };
  // As the transport's close signal: every waiting call listens to it.
  const closed = new AbortController().signal;
  setMaxListeners(0, closed);
  const auth = new PayflowAuth({ scopes: undefined, now: Date.now, closed }, secret, requestToken);
  return Object.assign(state, { auth, secret, sent });
}

describe('isInvalidClient', () => {
  it('is the token endpoint refusing the client (401 or 400 invalid_client) and nothing else', () => {
    expect(isInvalidClient(refused(401, 'invalid_client'))).toBe(true);
    expect(isInvalidClient(refused(400, 'invalid_client'))).toBe(true);
    expect(isInvalidClient(refused(400, 'invalid_scope'))).toBe(false);
    expect(isInvalidClient(refused(401, 'invalid_token'))).toBe(false);
    expect(isInvalidClient(new Error('invalid_client'))).toBe(false);
  });
});

describe('PayflowAuth: a rotated client secret', () => {
  it('invalid_client: reads the file again and requests the token once more with the new secret', async () => {
    const f = fixture({ accepted: 'new-secret' });
    f.file = 'new-secret';
    const authorization = await f.auth.authorize(callOf(f.auth));
    expect(authorization.header).toBe('Bearer token-1');
    expect(f.sent).toEqual(['old-secret', 'new-secret']);
    expect(f.reads).toBe(1);
    // The new secret stays: the next token request uses it at once.
    const issued = await f.auth.issue(undefined);
    expect(issued.accessToken.reveal()).toBe('token-2');
    expect(f.sent).toEqual(['old-secret', 'new-secret', 'new-secret']);
    expect(f.reads).toBe(1);
  });

  it('single flight: many calls waiting on the token cause one re-read and one new request', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const f = fixture({ accepted: 'new-secret', gate });
    f.file = 'new-secret';
    const waiting = Array.from({ length: 100 }, () => f.auth.authorize(callOf(f.auth)));
    release();
    const headers = (await Promise.all(waiting)).map((authorization) => authorization.header);
    expect(new Set(headers)).toEqual(new Set(['Bearer token-1']));
    expect(f.sent).toEqual(['old-secret', 'new-secret']);
    expect(f.reads).toBe(1);
    expect(f.auth.fetchCount).toBe(1);
    expect(f.secret.rereadCount).toBe(1);
  });

  it('the file unchanged: the refusal stands, attributed to the waiting call as not sent', async () => {
    const f = fixture({ accepted: 'new-secret' });
    const failure = await f.auth.authorize(callOf(f.auth)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PayflowError);
    expect(failure).toMatchObject({
      code: 'PAYFLOW.UNAUTHORIZED',
      transient: true,
      endpoint: 'createPayment',
      reached: 'no',
      stage: 'token',
      payflowCode: 'invalid_client',
    });
    expect(f.sent).toEqual(['old-secret']);
    expect(f.reads).toBe(1);
    // Later (the operator has updated the secret since), the next token request reads again.
    f.file = 'new-secret';
    expect((await f.auth.authorize(callOf(f.auth))).header).toBe('Bearer token-1');
    expect(f.sent).toEqual(['old-secret', 'old-secret', 'new-secret']);
    expect(f.reads).toBe(2);
  });

  it('no file: the refusal stands and nothing is read', async () => {
    const f = fixture({ accepted: 'new-secret', fromFile: false });
    f.file = 'new-secret';
    await expect(f.auth.authorize(callOf(f.auth))).rejects.toMatchObject({
      code: 'PAYFLOW.UNAUTHORIZED',
      payflowCode: 'invalid_client',
    });
    expect(f.sent).toEqual(['old-secret']);
    expect(f.reads).toBe(0);
  });

  it('the new secret refused too: that refusal stands, no third request', async () => {
    const f = fixture({ accepted: 'newest-secret' });
    f.file = 'new-secret';
    await expect(f.auth.authorize(callOf(f.auth))).rejects.toMatchObject({
      code: 'PAYFLOW.UNAUTHORIZED',
      stage: 'token',
    });
    expect(f.sent).toEqual(['old-secret', 'new-secret']);
    expect(f.reads).toBe(1);
  });

  it('other token failures read nothing: invalid_scope, a server error', async () => {
    for (const refusal of [() => refused(400, 'invalid_scope'), () => refused(503, 'busy')]) {
      const f = fixture({ accepted: 'new-secret', refusal });
      f.file = 'new-secret';
      await expect(f.auth.authorize(callOf(f.auth))).rejects.toBeInstanceOf(PayflowError);
      expect(f.sent).toEqual(['old-secret']);
      expect(f.reads).toBe(0);
    }
  });

  it('a token issued on a caller’s behalf (issue) follows the same rule', async () => {
    const f = fixture({ accepted: 'new-secret', refusal: () => refused(400, 'invalid_client') });
    f.file = 'new-secret';
    const issued = await f.auth.issue(['organization:payflow:create']);
    expect(issued.accessToken.reveal()).toBe('token-1');
    expect(f.sent).toEqual(['old-secret', 'new-secret']);
    expect(f.reads).toBe(1);
  });
});
