/**
 * Console sign-in through an OpenID provider (issue 27, part 2; CONTRACT §10), against a
 * real provider (oidc-provider, test/support/oidc-provider.ts) on http://localhost — another
 * site than the console on http://127.0.0.1, so the provider's redirect back is cross-site
 * as in production — and the real worker (its own database, the run's Kafka, the sandbox).
 *
 * In Debian's chromium: an operator signs in at the provider and acts (discards a dead
 * letter); a viewer reads, and each of the console's actions is refused (403) with nothing
 * changed in the database and every refusal recorded; a person without a role gets no
 * session (403 page); sign-out ends the session. Without a browser: ID tokens that are
 * expired, tampered with, signed by another key, or carry another nonce or state are
 * refused by the verification (ConsoleOidcClient over openid-client).
 */
import { createServer } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ConsoleOidcClient } from '../../src/console/oidc/oidc-client.js';
import type { OidcSignInFailed } from '../../src/console/access/console.errors.js';
import type { Worker } from '../../src/worker.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import { LAPTOP, launchChromium, screenshot } from '../support/browser.js';
import {
  OIDC_CLIENT_ID,
  OIDC_CLIENT_SECRET,
  signRs256,
  startOidcProvider,
  type TestOidcProvider,
} from '../support/oidc-provider.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

const SHOTS = join(process.cwd(), 'docs', 'console');
const TOKEN = 'console-token-for-the-oidc-test-0123456789';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('console sign-in through the OpenID provider', () => {
  let provider: TestOidcProvider;
  let pipeline: Pipeline;
  let worker: Worker;
  let db: pg.Client;
  let browser: Browser;
  let redirectUri = '';
  const contexts: BrowserContext[] = [];
  /** An order whose first event was invalid: one dead letter, discardable. */
  const blocked = anOrderId('OIDC-BLOCKED');
  /** Another, for the viewer to be refused on. */
  const other = anOrderId('OIDC-OTHER');

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: LAPTOP });
    contexts.push(context);
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  }

  /** Signs in at the provider as `login`; resolves on the page the callback ends at. */
  async function signInAs(
    page: Page,
    login: string,
    {
      shot,
      loginShot,
      signedIn = true,
    }: { shot?: string; loginShot?: string; signedIn?: boolean } = {},
  ): Promise<void> {
    await page.goto(`${worker.managementUrl}/console/login?next=/console/search`);
    if (loginShot !== undefined) await screenshot(page, join(SHOTS, loginShot));
    await page.getByRole('link', { name: 'Sign in with your organization' }).click();
    await page.waitForURL((url) => url.hostname === 'localhost');
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password');
    if (shot !== undefined) await screenshot(page, join(SHOTS, shot));
    await page.getByRole('button', { name: 'Sign-in' }).click();
    // The provider asks once per account to let the console have the profile.
    await page.waitForURL(
      (url) => url.hostname !== 'localhost' || /\/interaction\//.test(url.pathname),
    );
    if (new URL(page.url()).hostname === 'localhost') {
      await page.getByRole('button', { name: 'Continue' }).click();
    }
    await page.waitForURL((url) => url.hostname === '127.0.0.1');
    await page.waitForLoadState();
    // Signed in, the callback's page moves on to the console by itself.
    if (signedIn) await page.waitForURL('**/console/search');
  }

  const letterOf = async (orderId: string) =>
    (
      await db.query<{ eventId: string; discardedAt: Date | null; discardedBy: string | null }>(
        `SELECT event_id AS "eventId", discarded_at AS "discardedAt", discarded_by AS "discardedBy"
           FROM dead_letters WHERE order_id = $1`,
        [orderId],
      )
    ).rows[0];

  /** Everything an action could change, as text. */
  const databaseState = async (): Promise<string> => {
    const read = async (text: string): Promise<unknown[]> =>
      (await db.query<Record<string, unknown>>(text)).rows;
    return JSON.stringify([
      await read('SELECT * FROM dead_letters ORDER BY id'),
      await read('SELECT * FROM in_doubt_verdicts ORDER BY id'),
      await read('SELECT count(*) FROM outbox'),
      await read('SELECT * FROM settlement_nights ORDER BY 1, 2'),
      await read(`SELECT * FROM operator_actions WHERE action <> 'action_refused' ORDER BY id`),
    ]);
  };

  beforeAll(async () => {
    const managementPort = await freePort();
    redirectUri = `http://127.0.0.1:${managementPort}/console/oidc/callback`;
    provider = await startOidcProvider([redirectUri]);
    pipeline = await startPipeline('console-oidc', {
      MANAGEMENT_PORT: String(managementPort),
      CONSOLE_TOKEN: TOKEN,
      CONSOLE_OIDC_ISSUER: provider.issuer,
      CONSOLE_OIDC_CLIENT_ID: OIDC_CLIENT_ID,
      CONSOLE_OIDC_CLIENT_SECRET: OIDC_CLIENT_SECRET,
    });
    [worker, browser] = await Promise.all([pipeline.startWorker(), launchChromium()]);
    db = new pg.Client({ connectionString: pipeline.database.url });
    await db.connect();
    const { currency: _omitted, ...withoutCurrency } = paymentRequestedData();
    await pipeline.publish(
      [blocked, other].map((orderId) => ({
        key: orderId,
        value: anEnvelope('order.payment_requested', withoutCurrency as never, { orderId }),
      })),
    );
    await until(
      async () =>
        (await letterOf(blocked)) !== undefined && (await letterOf(other)) !== undefined
          ? true
          : undefined,
      'the dead letters',
    );
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await browser?.close();
    await db?.end();
    await pipeline?.stop();
    await provider?.close();
  });

  it('signs an operator in at the provider, who then acts, recorded with the provider’s subject', async () => {
    const page = await newPage();
    await signInAs(page, 'ola-operator', {
      loginShot: 'oidc-console-sign-in.png',
      shot: 'oidc-provider-sign-in.png',
    });
    expect(new URL(page.url()).pathname).toBe('/console/search');
    await expect(page.locator('.who').textContent()).resolves.toMatch(
      /Signed in as\s+Ola Operator\s+·\s+operator/,
    );
    const session = (await page.context().cookies()).find((c) => c.name === 'pfb_console');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    await screenshot(page, join(SHOTS, 'oidc-signed-in.png'));

    // Acting: the order's dead letter is discarded.
    await page.goto(`${worker.managementUrl}/console/orders/${encodeURIComponent(blocked)}`);
    await page.getByLabel(/^Why/).fill('test order, never to be paid');
    await page.getByRole('button', { name: /^Discard / }).click();
    await page.waitForLoadState();
    const letter = await until(async () => {
      const found = await letterOf(blocked);
      return found?.discardedAt === null ? undefined : found;
    }, 'the discard');
    expect(letter.discardedBy).toBe('Ola Operator (console)');
    const { rows } = await db.query<Record<string, unknown>>(
      `SELECT action, outcome, actor, actor_subject AS subject, actor_verified AS verified,
              client_address AS address, details->>'method' AS method
         FROM operator_actions WHERE actor_subject = 'ola-operator' ORDER BY id`,
    );
    expect(rows).toEqual([
      {
        action: 'sign_in',
        outcome: 'done',
        actor: 'Ola Operator',
        subject: 'ola-operator',
        verified: true,
        address: '127.0.0.1',
        method: 'oidc',
      },
      expect.objectContaining({ action: 'discard', outcome: 'done', verified: true }),
    ]);
  });

  it('lets a viewer read, and refuses every action (403) without changing anything', async () => {
    const page = await newPage();
    await signInAs(page, 'vera-viewer');
    await expect(page.locator('.who').textContent()).resolves.toContain('viewer (read only)');
    const answer = await page.goto(
      `${worker.managementUrl}/console/orders/${encodeURIComponent(other)}`,
    );
    expect(answer?.status()).toBe(200);
    const before = await databaseState();
    const csrf = await page.locator('form.sign-out input[name="_csrf"]').inputValue();
    const letter = await letterOf(other);
    const actions: [string, Record<string, string>][] = [
      [`/console/orders/${encodeURIComponent(other)}/contact`, {}],
      ['/console/dead-letters/replay', { orderId: other }],
      [`/console/dead-letters/${letter?.eventId ?? ''}/discard`, { reason: 'a viewer tries' }],
      [`/console/in-doubt/${encodeURIComponent(other)}/resolve`, { notCreated: 'yes' }],
      ['/console/settlements/pull', { org: 'org-1', date: '2026-11-27' }],
      ['/console/settlements/forget', { org: 'org-1', date: '2026-11-27' }],
    ];
    for (const [path, form] of actions) {
      const refused = await page.context().request.post(`${worker.managementUrl}${path}`, {
        form: { ...form, _csrf: csrf },
        maxRedirects: 0,
      });
      expect({ path, status: refused.status() }).toEqual({ path, status: 403 });
      expect(await refused.text()).toContain('Your role is viewer');
    }
    // In the browser the actions are not offered to a viewer (no form, no action panel); a
    // form sent anyway (made by hand here) is refused.
    await expect(page.locator('.read-only-notice').isVisible()).resolves.toBe(true);
    const reveal = page.getByRole('button', { name: 'Show e-mail and phone' });
    await expect(reveal.count()).resolves.toBe(0);
    await expect(page.locator('main form[method="post"]').count()).resolves.toBe(0);
    await expect(page.locator('#actions-title').count()).resolves.toBe(0);
    await screenshot(page, join(SHOTS, 'oidc-viewer-order.png'));
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.evaluate(`(() => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = location.pathname + '/contact';
        const csrf = document.createElement('input');
        csrf.type = 'hidden';
        csrf.name = '_csrf';
        csrf.value = document.querySelector('input[name="_csrf"]').value;
        form.append(csrf);
        document.body.append(form);
        form.submit();
      })()`),
    ]);
    await page.waitForLoadState();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Nothing was changed');
    await screenshot(page, join(SHOTS, 'oidc-viewer-refused.png'));

    expect(await databaseState()).toBe(before);
    const { rows } = await db.query<{ route: string; order: string | null }>(
      `SELECT details->>'route' AS route, order_id AS order FROM operator_actions
        WHERE action = 'action_refused' AND actor_subject = 'vera-viewer' AND outcome = 'refused'
          AND actor_verified ORDER BY id`,
    );
    expect(rows.map((row) => row.route)).toEqual([
      '/console/orders/:orderId/contact',
      '/console/dead-letters/replay',
      '/console/dead-letters/:eventId/discard',
      '/console/in-doubt/:orderId/resolve',
      '/console/settlements/pull',
      '/console/settlements/forget',
      '/console/orders/:orderId/contact',
    ]);
    expect(rows[0]?.order).toBe(other);
  });

  it('lets nobody in without a role: a 403 page, no session, the refusal recorded', async () => {
    const page = await newPage();
    const [callback] = await Promise.all([
      page.waitForResponse((response) => response.url().startsWith(redirectUri)),
      signInAs(page, 'nils-norole', { signedIn: false }),
    ]);
    expect(callback.status()).toBe(403);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('no role');
    const names = (await page.context().cookies()).map((cookie) => cookie.name);
    expect(names).not.toContain('pfb_console');
    const search = await page.goto(`${worker.managementUrl}/console/search`);
    expect(new URL(search?.url() ?? '').pathname).toBe('/console/login');
    const { rows } = await db.query(
      `SELECT outcome, actor, details->>'reason' AS reason FROM operator_actions
        WHERE action = 'sign_in' AND actor_subject = 'nils-norole'`,
    );
    expect(rows).toEqual([{ outcome: 'refused', actor: 'Nils Norole', reason: 'no_role' }]);
  });

  it('refuses a callback that no sign-in of this browser started', async () => {
    const answer = await fetch(`${redirectUri}?code=stolen-code&state=some-state`);
    expect(answer.status).toBe(401);
    const { rows } = await db.query(
      `SELECT actor, outcome FROM operator_actions
        WHERE action = 'sign_in' AND details->>'reason' = 'no_pending_sign_in'`,
    );
    expect(rows).toEqual([{ actor: '(unknown)', outcome: 'refused' }]);
  });

  it('ends the session at sign-out: the old cookie opens nothing', async () => {
    const page = await newPage();
    await signInAs(page, 'otto-operator');
    const cookies = await page.context().cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/console/login');
    const again = await newPage();
    await again.context().addCookies(cookies);
    await again.goto(`${worker.managementUrl}/console/search`);
    expect(new URL(again.url()).pathname).toBe('/console/login');
    const { rows } = await db.query<{ action: string }>(
      `SELECT action FROM operator_actions WHERE actor_subject = 'otto-operator' ORDER BY id`,
    );
    expect(rows.map((row) => row.action)).toEqual(['sign_in', 'sign_out']);
  });

  describe('the ID token’s verification (no browser)', () => {
    /** The client, with the provider's token answer replaced by `idToken`. */
    function clientAnswering(idToken: (nonce: string) => string) {
      let nonce = '';
      const fetchReplacing = async (
        url: string,
        options: Parameters<typeof fetch>[1],
      ): Promise<Response> => {
        if (new URL(url).pathname.endsWith('/token')) {
          return Response.json({
            access_token: 'an-access-token',
            token_type: 'Bearer',
            expires_in: 60,
            id_token: idToken(nonce),
          });
        }
        return fetch(url, options);
      };
      const client = new ConsoleOidcClient(
        {
          issuer: provider.issuer,
          clientId: OIDC_CLIENT_ID,
          clientSecret: OIDC_CLIENT_SECRET,
          rolesClaim: 'roles',
        },
        { fetch: fetchReplacing },
      );
      return {
        async signIn(state?: string) {
          const { challenge } = await client.start(redirectUri);
          nonce = challenge.nonce;
          const query = new URLSearchParams({
            code: 'a-code',
            state: state ?? challenge.state,
            iss: provider.issuer,
          });
          return client.finish(query, challenge);
        },
      };
    }

    const now = () => Math.floor(Date.now() / 1000);
    const claims = (nonce: string, extra: object = {}) => ({
      iss: provider.issuer,
      aud: OIDC_CLIENT_ID,
      sub: 'vera-viewer',
      name: 'Vera Viewer',
      roles: ['viewer'],
      nonce,
      iat: now(),
      exp: now() + 300,
      ...extra,
    });
    const reasonOf = async (signIn: Promise<unknown>): Promise<string> => {
      try {
        await signIn;
        return 'accepted';
      } catch (error) {
        // The reason, and the deepest cause openid-client gave (what it found wrong).
        let cause: unknown = error;
        while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
        return `${(error as OidcSignInFailed).reason}: ${(cause as Error).message}`;
      }
    };

    it('accepts a token the provider’s key signed (the control)', async () => {
      const client = clientAnswering((nonce) =>
        signRs256(claims(nonce), provider.signingKey, provider.kid),
      );
      await expect(client.signIn()).resolves.toEqual({
        operator: 'Vera Viewer',
        subject: 'vera-viewer',
        verified: true,
        role: 'viewer',
      });
    });

    it('refuses an expired token', async () => {
      const client = clientAnswering((nonce) =>
        signRs256(
          claims(nonce, { iat: now() - 7200, exp: now() - 3600 }),
          provider.signingKey,
          provider.kid,
        ),
      );
      await expect(reasonOf(client.signIn())).resolves.toMatch(/^token_rejected: .*"exp"/);
    });

    it('refuses a token whose claims were changed after signing (viewer made operator)', async () => {
      const client = clientAnswering((nonce) => {
        const [header, , signature] = signRs256(
          claims(nonce),
          provider.signingKey,
          provider.kid,
        ).split('.');
        const forged = Buffer.from(JSON.stringify(claims(nonce, { roles: ['operator'] }))).toString(
          'base64url',
        );
        return `${header}.${forged}.${signature}`;
      });
      await expect(reasonOf(client.signIn())).resolves.toMatch(/^token_rejected: .*signature/i);
    });

    it('refuses a token signed by another key under the provider’s key id', async () => {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const client = clientAnswering((nonce) => signRs256(claims(nonce), privateKey, provider.kid));
      await expect(reasonOf(client.signIn())).resolves.toMatch(/^token_rejected: .*signature/i);
    });

    it('refuses a token for another nonce, and an answer for another state', async () => {
      const replayed = clientAnswering(() =>
        signRs256(claims('another-sign-ins-nonce'), provider.signingKey, provider.kid),
      );
      await expect(reasonOf(replayed.signIn())).resolves.toMatch(/^token_rejected: .*"nonce"/);
      const good = clientAnswering((nonce) =>
        signRs256(claims(nonce), provider.signingKey, provider.kid),
      );
      await expect(reasonOf(good.signIn('another-state'))).resolves.toMatch(
        /^token_rejected: .*"state"/,
      );
    });

    it('refuses a token for another audience, or from another issuer', async () => {
      const audience = clientAnswering((nonce) =>
        signRs256(claims(nonce, { aud: 'another-client' }), provider.signingKey, provider.kid),
      );
      await expect(reasonOf(audience.signIn())).resolves.toMatch(/^token_rejected: .*"aud"/);
      const issuer = clientAnswering((nonce) =>
        signRs256(claims(nonce, { iss: 'http://localhost:1' }), provider.signingKey, provider.kid),
      );
      await expect(reasonOf(issuer.signIn())).resolves.toMatch(/^token_rejected: .*"iss"/);
    });
  });
});
