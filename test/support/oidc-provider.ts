/**
 * A real OpenID provider for the console's tests: `oidc-provider` (node-oidc-provider, a
 * certified OpenID Connect implementation) on a port of its own, with its development
 * sign-in pages (any login, any password: the login is the account), one confidential
 * client for the console (PKCE required), and RS256 keys made here so that a test can also
 * sign tokens with them (an expired one) or with another key (a forged one).
 *
 * Each account's roles come from its login: `…operator…` has ["operator"], `…viewer…` has
 * ["viewer"], any other has none. They go into the ID token's `roles` claim.
 */
import { createSign, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

export const OIDC_CLIENT_ID = 'payflow-bridge-console';
export const OIDC_CLIENT_SECRET = 'console-client-secret-for-the-test-0123456789';

export interface TestOidcProvider {
  /** http://localhost:PORT: another site than the console's http://127.0.0.1:PORT. */
  readonly issuer: string;
  /** The provider's signing key (its JWKS publishes the public half), to sign test tokens. */
  readonly signingKey: KeyObject;
  readonly kid: string;
  close(): Promise<void>;
}

/** The roles of an account, by its login (see the file's comment). */
export function rolesOfLogin(login: string): string[] {
  if (login.includes('operator')) return ['operator'];
  if (login.includes('viewer')) return ['viewer'];
  return [];
}

/** A display name for an account: its login, capitalized, with spaces. */
function nameOf(login: string): string {
  return login
    .split(/[-_.]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join(' ');
}

/** Starts the provider; `redirectUris` are the console's callbacks it accepts. */
export async function startOidcProvider(redirectUris: string[]): Promise<TestOidcProvider> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomUUID();
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://localhost:${port}`;
  const configuration: Configuration = {
    clients: [
      {
        client_id: OIDC_CLIENT_ID,
        client_secret: OIDC_CLIENT_SECRET,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    // The profile scope's claims (name, roles) go into the ID token itself.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], profile: ['name', 'roles'] },
    pkce: { required: () => true },
    cookies: { keys: ['a-cookie-signing-key-for-the-test-provider'] },
    features: { devInteractions: { enabled: true } },
    ttl: {
      IdToken: 600,
      AccessToken: 600,
      AuthorizationCode: 60,
      Session: 600,
      Grant: 600,
      Interaction: 600,
    },
    async findAccount(_ctx, id) {
      return Promise.resolve({
        accountId: id,
        claims: () => ({ sub: id, name: nameOf(id), roles: rolesOfLogin(id) }),
      });
    },
  };
  // The development sign-in warns that it is one, on the console: quiet here, where it is meant.
  const warn = console.warn;
  console.warn = () => undefined;
  let provider: Provider;
  try {
    provider = new Provider(issuer, configuration);
  } finally {
    console.warn = warn;
  }
  const handle = provider.callback();
  server.on('request', (request, response) => {
    void handle(request, response);
  });
  return {
    issuer,
    signingKey: privateKey,
    kid,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A compact JWS (RS256) of `claims`, signed with `key` under `kid`. */
export function signRs256(claims: object, key: KeyObject, kid: string): string {
  const encode = (part: object): string => Buffer.from(JSON.stringify(part)).toString('base64url');
  const input = `${encode({ alg: 'RS256', typ: 'JWT', kid })}.${encode(claims)}`;
  const signature = createSign('RSA-SHA256').update(input).sign(key).toString('base64url');
  return `${input}.${signature}`;
}
