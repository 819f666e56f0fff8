/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4) as docs/assumptions.md decides: the token
 * endpoint takes HTTP Basic client authentication and a form body; bearer tokens expire on
 * the virtual clock (so a test can expire one with POST /sandbox/clock/advance); scopes per
 * endpoint; `X-Organization-Id` required only for clients of several organizations.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError, codeError, unprocessable } from './errors.js';
import { newAccessToken } from '../state/ids.js';
import type { AccessToken, Client, Organization, SandboxState } from '../state/state.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const BASIC = /^Basic\s+(\S+)\s*$/i;
/**
 * Expired tokens are swept when the table grows past this; if it is still past it then
 * (a client taking a new token per call), the oldest live tokens are revoked down to
 * TOKEN_KEEP_AFTER_SWEEP, so that the table stays bounded and a sweep happens at most once
 * per 1,000 tokens issued.
 */
export const TOKEN_SWEEP_THRESHOLD = 10_000;
const TOKEN_KEEP_AFTER_SWEEP = 9_000;

export interface Authenticated {
  client: Client;
  token: AccessToken;
}

function oauthError(
  status: number,
  error: string,
  description: string,
  headers?: Record<string, string>,
): ApiError {
  return new ApiError(status, { error, error_description: description }, headers);
}

function invalidClient(description: string): ApiError {
  return oauthError(401, 'invalid_client', description, {
    'www-authenticate': 'Basic realm="payflow"',
  });
}

export interface IssuedToken {
  accessToken: string;
  scopes: string[];
}

/** POST /partner/auth/token: the token issued (shapes.ts writes the answer). */
export function issueToken(
  state: SandboxState,
  request: FastifyRequest,
  now: number,
  ttlSeconds: number,
): IssuedToken {
  const credentials = basicCredentials(request.headers.authorization);
  if (!credentials) throw invalidClient('client authentication by HTTP Basic is required');
  const client = findClient(state, credentials);
  if (!client) {
    throw invalidClient('unknown client or wrong secret');
  }
  const contentType = request.headers['content-type'] ?? '';
  const body = request.body;
  if (!contentType.startsWith('application/x-www-form-urlencoded') || !isStringRecord(body)) {
    throw oauthError(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  const grantType = body.grant_type;
  if (!grantType) throw oauthError(400, 'invalid_request', 'grant_type is required');
  if (grantType !== 'client_credentials') {
    throw oauthError(400, 'unsupported_grant_type', 'only client_credentials is supported');
  }
  const requested = (body.scope ?? '').split(/\s+/).filter(Boolean);
  const missing = requested.filter((scope) => !client.scopes.includes(scope));
  if (missing.length > 0) {
    throw oauthError(400, 'invalid_scope', `the client lacks ${missing.join(' ')}`);
  }
  const scopes = requested.length > 0 ? [...new Set(requested)] : [...client.scopes];
  if (state.tokens.size > TOKEN_SWEEP_THRESHOLD) sweepExpired(state, now);
  const accessToken = newAccessToken();
  state.tokens.set(accessToken, {
    clientId: client.clientId,
    scopes: new Set(scopes),
    expiresAt: now + ttlSeconds * 1000,
  });
  return { accessToken, scopes };
}

/**
 * Replaces a client's secret (a rotation at Payflow): from now on the token endpoint accepts
 * the new secret only, and answers the old one with 401 invalid_client. Access tokens already
 * issued stay valid until they expire, as at the usual OAuth servers (Auth0, Okta, Microsoft
 * Entra ID, Keycloak: rotating or deleting a client secret revokes no access token, and a
 * self-contained JWT cannot be revoked), so a client notices the rotation at its next token
 * request: when its token expires (a test advances the virtual clock past the token lifetime).
 * False when there is no such client.
 */
export function changeClientSecret(
  state: SandboxState,
  clientId: string,
  clientSecret: string,
): boolean {
  const client = state.clients.get(clientId);
  if (!client) return false;
  client.clientSecret = clientSecret;
  return true;
}

/** Checks the bearer token (401) and, when given, the scope (403). */
export function authenticate(
  state: SandboxState,
  request: FastifyRequest,
  now: number,
  scope: string | undefined,
): Authenticated {
  const match = BEARER.exec(request.headers.authorization ?? '');
  // RFC 6750 §3.1: a request that carries no token gets a challenge without an error code.
  if (!match?.[1]) throw unauthorized('unauthorized', 'a bearer token is required', undefined);
  const token = state.tokens.get(match[1]);
  const client = token && state.clients.get(token.clientId);
  if (!token || !client)
    throw unauthorized('unauthorized', 'the bearer token is not valid', 'invalid_token');
  if (now >= token.expiresAt) {
    throw unauthorized('token_expired', 'the bearer token has expired', 'invalid_token');
  }
  if (scope !== undefined && !token.scopes.has(scope)) {
    throw codeError(403, 'insufficient_scope', `this call needs the scope ${scope}`, {
      'www-authenticate': `Bearer realm="payflow", error="insufficient_scope", scope="${scope}"`,
    });
  }
  return { client, token };
}

/** The organization a call acts for: X-Organization-Id, or the client's only organization. */
export function resolveOrganization(
  state: SandboxState,
  client: Client,
  request: FastifyRequest,
): Organization {
  const header = request.headers['x-organization-id'];
  const requested = Array.isArray(header) ? header[0] : header;
  if (requested) {
    const organization = state.organizations.get(requested);
    if (!organization || !client.organizationIds.includes(requested)) {
      throw codeError(403, 'organization_forbidden', `the client may not act for ${requested}`);
    }
    return organization;
  }
  if (client.organizationIds.length >= 2) {
    throw unprocessable([
      {
        loc: ['header', 'X-Organization-Id'],
        msg: 'required for a client of several organizations',
        type: 'value_error.missing',
      },
    ]);
  }
  const only = client.organizationIds[0];
  const organization = only === undefined ? undefined : state.organizations.get(only);
  if (!organization)
    throw codeError(403, 'organization_forbidden', 'the client has no organization');
  return organization;
}

function unauthorized(code: string, message: string, error: string | undefined): ApiError {
  return codeError(401, code, message, {
    'www-authenticate':
      error === undefined ? 'Bearer realm="payflow"' : `Bearer realm="payflow", error="${error}"`,
  });
}

function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = BASIC.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

/**
 * RFC 6749 §2.3.1 form-encodes id and secret before the Basic encoding; many clients do
 * not, so both the raw and the decoded form are accepted.
 */
function findClient(
  state: SandboxState,
  credentials: { id: string; secret: string },
): Client | undefined {
  for (const [id, secret] of [
    [credentials.id, credentials.secret],
    [formDecode(credentials.id), formDecode(credentials.secret)],
  ] as const) {
    const client = state.clients.get(id);
    if (client && sameSecret(client.clientSecret, secret)) return client;
  }
  return undefined;
}

function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

function isStringRecord(value: unknown): value is Record<string, string | undefined> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sweepExpired(state: SandboxState, now: number): void {
  for (const [token, entry] of state.tokens) {
    if (entry.expiresAt <= now) state.tokens.delete(token);
  }
  if (state.tokens.size <= TOKEN_SWEEP_THRESHOLD) return;
  // A Map iterates in insertion order: the oldest tokens first.
  for (const token of state.tokens.keys()) {
    if (state.tokens.size <= TOKEN_KEEP_AFTER_SWEEP) break;
    state.tokens.delete(token);
  }
}
