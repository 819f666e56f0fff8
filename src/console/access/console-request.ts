/**
 * What the console reads from and writes to a request: its cookies, the session the guard
 * found, the form fields of a POST, whether it came over TLS, and its safe `next` target.
 */
import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_PREFIX } from '../console.options.js';
import type { ConsoleSession } from '../sign-in/session-store.js';

export const SESSION_COOKIE = 'pfb_console';
/** The sign-in form's own CSRF secret (double submit), before there is a session. */
export const LOGIN_COOKIE = 'pfb_console_login';
/** A started OpenID sign-in (its state, nonce and PKCE verifier stay in the worker's memory). */
export const OIDC_COOKIE = 'pfb_console_oidc';
/** The form field every POST carries its CSRF token in. */
export const CSRF_FIELD = '_csrf';

/** The cookies of a request (the last value of a repeated name wins). */
export function cookiesOf(request: FastifyRequest): Map<string, string> {
  const cookies = new Map<string, string>();
  const header = request.headers.cookie;
  if (header === undefined) return cookies;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    try {
      cookies.set(name, decodeURIComponent(value));
    } catch {
      // A value that is not valid percent-encoding is no value of ours.
    }
  }
  return cookies;
}

/** Whether the request reached us over TLS. */
export function overTls(request: FastifyRequest): boolean {
  return (request.raw.socket as Partial<TLSSocket>).encrypted === true;
}

export interface CookieOptions {
  /** Seconds; 0 deletes the cookie. Absent: a cookie for the browser's session. */
  readonly maxAgeSeconds?: number;
  /**
   * Strict (the default): never sent with a request another site started. Lax: also sent
   * on a top-level GET from another site (the OpenID provider's redirect back to us).
   */
  readonly sameSite?: 'Strict' | 'Lax';
}

/**
 * A cookie's name and scope as the browser sees the console: over HTTPS `__Host-<name>`
 * (the browser then insists on Secure, Path=/ and no Domain, so no other host or path can
 * set or shadow it); over plain HTTP (loopback only) `<name>` on Path=/console.
 */
export function cookieName(name: string, https: boolean): string {
  return https ? `__Host-${name}` : name;
}

/** Adds a Set-Cookie: HttpOnly, SameSite=Strict (or Lax), Secure and `__Host-` over HTTPS. */
export function setCookie(
  reply: FastifyReply,
  https: boolean,
  name: string,
  value: string,
  options: CookieOptions = {},
): void {
  const parts = [
    `${cookieName(name, https)}=${encodeURIComponent(value)}`,
    `Path=${https ? '/' : CONSOLE_PREFIX}`,
    'HttpOnly',
    `SameSite=${options.sameSite ?? 'Strict'}`,
  ];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  if (https) parts.push('Secure');
  // fastify adds each Set-Cookie to those set before (it never replaces one).
  void reply.header('set-cookie', parts.join('; '));
}

/** A text field of a url-encoded form body ('' when absent or not text). */
export function formField(body: unknown, name: string): string {
  if (typeof body !== 'object' || body === null) return '';
  const value: unknown = (body as Record<string, unknown>)[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return '';
}

/** A query parameter as text ('' when absent). */
export function queryParam(request: FastifyRequest, name: string): string {
  return formField(request.query, name);
}

const sessions = new WeakMap<FastifyRequest, ConsoleSession>();

/** The guard found this request's session. */
export function attachSession(request: FastifyRequest, session: ConsoleSession): void {
  sessions.set(request, session);
}

/** The session of a request the guard let through. */
export function sessionOf(request: FastifyRequest): ConsoleSession | undefined {
  return sessions.get(request);
}

/**
 * Where to go after signing in: a path of the console given as `next`, or the console's
 * start page. Anything else (another site, `//host`, a scheme) is ignored.
 */
export function safeNext(next: string): string {
  if (/^\/console(\/[A-Za-z0-9._~\-/%?=&+]*)?$/.test(next) && !next.startsWith('//')) return next;
  return `${CONSOLE_PREFIX}/search`;
}
