/**
 * The console's cookies and HSTS where the browser sees HTTPS (issue 27, part 2): the real
 * worker with its management port over TLS (MANAGEMENT_TLS_*), and another behind a TLS
 * proxy (CONSOLE_BEHIND_TLS_PROXY=true, plain HTTP on loopback). Both answer with
 * `Strict-Transport-Security` and set every console cookie `Secure` and `__Host-`
 * prefixed (Path=/), and read only those names; the plain-HTTP console of console.test.ts
 * keeps `pfb_console` on Path=/console and sends no HSTS.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent, request } from 'undici';
import type { AppConfig } from '../../src/config/app-config.js';
import type { Worker } from '../../src/worker.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { selfSignedTls } from '../support/tls.js';

const TOKEN = 'console-token-for-the-https-test-0123456789';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly cookies: string[];
  readonly body: string;
}

describe('console cookies and HSTS where the browser sees HTTPS', () => {
  let pipeline: Pipeline;
  let agent: Agent;
  const workers: Record<'tls' | 'proxied' | 'plain', Worker | undefined> = {
    tls: undefined,
    proxied: undefined,
    plain: undefined,
  };

  async function call(
    url: string,
    options: { method?: 'GET' | 'POST'; cookie?: string; form?: Record<string, string> } = {},
  ): Promise<Answer> {
    const answer = await request(url, {
      method: options.method ?? 'GET',
      dispatcher: agent,
      headers: {
        ...(options.cookie === undefined ? {} : { cookie: options.cookie }),
        ...(options.form === undefined
          ? {}
          : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(options.form === undefined ? {} : { body: new URLSearchParams(options.form).toString() }),
    });
    const setCookie = answer.headers['set-cookie'];
    return {
      status: answer.statusCode,
      headers: answer.headers,
      cookies: setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie],
      body: await answer.body.text(),
    };
  }

  /** The value a Set-Cookie line gives `name`. */
  const valueOf = (cookies: string[], name: string): string =>
    decodeURIComponent(
      cookies
        .find((line) => line.startsWith(`${name}=`))
        ?.slice(name.length + 1)
        .split(';')[0] ?? '',
    );

  beforeAll(async () => {
    const tls = await selfSignedTls();
    const dir = mkdtempSync(join(tmpdir(), 'pfb-console-https-'));
    writeFileSync(join(dir, 'cert.pem'), tls.cert);
    writeFileSync(join(dir, 'key.pem'), tls.key);
    agent = new Agent({ connect: { ca: tls.ca } });
    pipeline = await startPipeline('console-https', { CONSOLE_TOKEN: TOKEN });
    const over = (patch: Partial<AppConfig>) => pipeline.startWorker({}, patch);
    [workers.tls, workers.proxied, workers.plain] = await Promise.all([
      over({
        MANAGEMENT_TLS_CERT_FILE: join(dir, 'cert.pem'),
        MANAGEMENT_TLS_KEY_FILE: join(dir, 'key.pem'),
      }),
      over({ CONSOLE_BEHIND_TLS_PROXY: true }),
      over({}),
    ]);
  }, 120_000);

  afterAll(async () => {
    await pipeline?.stop();
    await agent?.close();
  });

  for (const kind of ['tls', 'proxied'] as const) {
    it(`${kind === 'tls' ? 'over TLS' : 'behind a TLS proxy'}: __Host- and Secure cookies, HSTS, and a session that works`, async () => {
      const base = workers[kind]?.managementUrl ?? '';
      expect(base.startsWith(kind === 'tls' ? 'https://' : 'http://')).toBe(true);
      const form = await call(`${base}/console/login`);
      expect(form.status).toBe(200);
      expect(form.headers['strict-transport-security']).toBe('max-age=31536000');
      expect(form.cookies).toEqual([
        expect.stringMatching(
          /^__Host-pfb_console_login=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Strict; Secure$/,
        ),
      ]);
      const loginSecret = valueOf(form.cookies, '__Host-pfb_console_login');

      const signedIn = await call(`${base}/console/login`, {
        method: 'POST',
        cookie: `__Host-pfb_console_login=${loginSecret}`,
        form: {
          _csrf: loginSecret,
          operator: 'Kari Support',
          token: TOKEN,
          next: '/console/search',
        },
      });
      expect(signedIn.status).toBe(303);
      expect(signedIn.cookies).toEqual([
        expect.stringMatching(
          /^__Host-pfb_console=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=28800; Secure$/,
        ),
        '__Host-pfb_console_login=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure',
      ]);
      const session = valueOf(signedIn.cookies, '__Host-pfb_console');
      const search = await call(`${base}/console/search`, {
        cookie: `__Host-pfb_console=${session}`,
      });
      expect(search.status).toBe(200);
      expect(search.headers['strict-transport-security']).toBe('max-age=31536000');
      // The unprefixed name is not the session's over HTTPS: a cookie another path or host
      // could have set opens nothing.
      const unprefixed = await call(`${base}/console/search`, { cookie: `pfb_console=${session}` });
      expect(unprefixed.status).toBe(303);
    });
  }

  it('on plain HTTP (loopback): no HSTS, no prefix, not Secure', async () => {
    const form = await call(`${workers.plain?.managementUrl ?? ''}/console/login`);
    expect(form.status).toBe(200);
    expect(form.headers['strict-transport-security']).toBeUndefined();
    expect(form.cookies).toEqual([
      expect.stringMatching(
        /^pfb_console_login=[A-Za-z0-9_-]+; Path=\/console; HttpOnly; SameSite=Strict$/,
      ),
    ]);
  });
});
