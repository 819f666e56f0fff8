/**
 * A console session over fetch for the console's integration tests: signed in with the
 * console token (an operator), or opened where an OpenID sign-in opens it (a viewer), with
 * the CSRF token its pages carry.
 */
import { expect } from '@jest/globals';
import { ConsoleAuth } from '../../src/console/sign-in/console-auth.js';
import type { Worker } from '../../src/worker.js';

/** A signed-in console session over fetch: its cookie and the CSRF token its pages carry. */
export interface Session {
  get(path: string): Promise<{ status: number; html: string }>;
  post(path: string, form: Record<string, string>): Promise<{ status: number; html: string }>;
  readonly csrf: string;
}

function cookieOf(response: Response): string {
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0] ?? '')
    .filter((cookie) => !cookie.endsWith('='))
    .join('; ');
}

export function hidden(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (match?.[1] === undefined) throw new Error(`no ${name} field on the page`);
  return match[1];
}

async function sessionWith(base: string, cookie: string): Promise<Session> {
  const get = async (path: string) => {
    const response = await fetch(`${base}${path}`, { headers: { cookie }, redirect: 'manual' });
    return { status: response.status, html: await response.text() };
  };
  const post = async (path: string, fields: Record<string, string>) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams(fields).toString(),
    });
    return { status: response.status, html: await response.text() };
  };
  const page = await get('/console/search');
  expect(page.status).toBe(200);
  return { get, post, csrf: hidden(page.html, '_csrf') };
}

export async function signIn(
  base: string,
  { token, operator }: { token: string; operator: string },
): Promise<Session> {
  const form = await fetch(`${base}/console/login`);
  const signedIn = await fetch(`${base}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieOf(form) },
    body: new URLSearchParams({
      _csrf: hidden(await form.text(), '_csrf'),
      next: '/console/search',
      operator,
      token,
    }).toString(),
  });
  expect(signedIn.status).toBe(303);
  return sessionWith(base, cookieOf(signedIn));
}

/** A viewer's session, opened where an OpenID sign-in opens it (plain HTTP: `pfb_console`). */
export async function viewer(worker: Worker): Promise<Session> {
  const { id } = worker.app
    .get(ConsoleAuth)
    .sessions.open(
      { operator: 'Vera Viewer', subject: 'vera-viewer', verified: true, role: 'viewer' },
      '127.0.0.1',
    );
  return sessionWith(worker.managementUrl, `pfb_console=${id}`);
}
