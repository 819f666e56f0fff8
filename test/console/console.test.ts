/**
 * The operator console in a real browser (Debian's chromium through playwright-core),
 * against the real worker: Postgres of its own, the run's Kafka, the Payflow sandbox
 * delivering webhooks over HTTPS. Orders travel the whole way first (payment created, a
 * webhook, status events, a dead letter); then the browser signs in, finds an order by its
 * number and reads its story, and the console's defences are tried: signed out, a wrong
 * token, an ended session, a POST without its CSRF token, the public port, and a client
 * that guesses. Each page is photographed into docs/console/ (README shows one).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Worker } from '../../src/worker.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import { LAPTOP, PHONE, launchChromium, screenshot } from '../support/browser.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import { selfSignedTls } from '../support/tls.js';

const TOKEN = 'console-token-for-the-browser-test-0123456789';
const OPERATOR = 'Kari Support';
/** Short, so that the ended-session test need not wait 30 minutes. */
const SESSION_IDLE_MS = 15_000;
const SHOTS = join(process.cwd(), 'docs', 'console');

interface StatusEvent {
  type: string;
  orderId: string;
  paymentId: string | null;
}

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

/**
 * What on the page breaks the basics of accessibility, run in the page: text under 4.5:1
 * against its background (WCAG AA), a form field without a label, a missing landmark.
 */
const ACCESSIBILITY_PROBLEMS = `(() => {
  const parse = (color) => {
    const match = /rgba?\\(([^)]+)\\)/.exec(color);
    if (match === null) return null;
    const [r, g, b, a = 1] = match[1].split(',').map(Number);
    return { r, g, b, a };
  };
  const channel = (value) => {
    const v = value / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const luminance = (c) => 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
  const background = (element) => {
    for (let e = element; e !== null; e = e.parentElement) {
      const color = parse(getComputedStyle(e).backgroundColor);
      if (color !== null && color.a > 0) return color;
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  };
  const problems = [];
  for (const element of document.querySelectorAll('body *')) {
    const style = getComputedStyle(element);
    if (style.display === 'none' || style.visibility === 'hidden') continue;
    const text = [...element.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!text) continue;
    const [high, low] = [luminance(parse(style.color)), luminance(background(element))].sort((a, b) => b - a);
    const ratio = (high + 0.05) / (low + 0.05);
    if (ratio < 4.5) problems.push('contrast ' + ratio.toFixed(2) + ': ' + element.tagName + ' ' + element.textContent.trim().slice(0, 40));
  }
  for (const field of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
    if (field.labels.length === 0 && !field.getAttribute('aria-label')) problems.push('no label: ' + field.outerHTML.slice(0, 60));
  }
  for (const landmark of ['header', 'main', 'footer']) {
    if (document.querySelector(landmark) === null) problems.push('no ' + landmark);
  }
  return problems;
})()`;

describe('the operator console in a browser', () => {
  let pipeline: Pipeline;
  let worker: Worker;
  let status: TopicReader;
  let db: pg.Client;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  /** The paid order: payment created, a webhook, status events, then a dead letter. */
  const paid = { orderId: anOrderId('CONSOLE'), orderNumber: `SO-${Date.now().toString(36)}` };
  /** An order whose first event was invalid: dead-lettered with the customer in it. */
  const blocked = { orderId: anOrderId('CONSOLE-BLOCKED') };
  let paymentId = '';

  const control = async (method: string, path: string, body?: unknown): Promise<void> => {
    const response = await fetch(`${pipeline.sandbox.url}/sandbox${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status}`);
  };
  const eventsOf = (orderId: string) =>
    status.json<StatusEvent>().filter((event) => event.orderId === orderId);
  const letters = async (orderId: string): Promise<number> =>
    Number(
      (
        await db.query<{ n: string }>(
          'SELECT count(*) AS n FROM dead_letters WHERE order_id = $1',
          [orderId],
        )
      ).rows[0]?.n ?? 0,
    );

  async function newPage(viewport: { width: number; height: number } = LAPTOP): Promise<Page> {
    const context = await browser.newContext({ viewport, ignoreHTTPSErrors: true });
    contexts.push(context);
    return context.newPage();
  }

  async function signIn(page: Page, next = '/console/search'): Promise<void> {
    await page.goto(`${worker.managementUrl}/console/login?next=${encodeURIComponent(next)}`);
    await page.getByLabel('Your name').fill(OPERATOR);
    await page.getByLabel('Console token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === next);
  }

  beforeAll(async () => {
    const tls = await selfSignedTls();
    const dir = mkdtempSync(join(tmpdir(), 'pfb-console-'));
    writeFileSync(join(dir, 'cert.pem'), tls.cert);
    writeFileSync(join(dir, 'key.pem'), tls.key);
    const port = await freePort();
    pipeline = await startPipeline(
      'console',
      {
        HTTP_PORT: String(port),
        WEBHOOK_PUBLIC_BASE_URL: `https://localhost:${port}`,
        TLS_CERT_FILE: join(dir, 'cert.pem'),
        TLS_KEY_FILE: join(dir, 'key.pem'),
        CONSOLE_TOKEN: TOKEN,
      },
      { webhookCa: tls.ca },
    );
    [worker, status, browser] = await Promise.all([
      pipeline.startWorker({
        webhookProcessing: { pollIntervalMs: 100, retryBaseMs: 200 },
        console: { sessionIdleMs: SESSION_IDLE_MS },
      }),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
      launchChromium(),
    ]);
    db = new pg.Client({ connectionString: pipeline.database.url });
    await db.connect();

    // A real run: the payment is created at the sandbox, the payer pays (a webhook), the
    // status events go out; then an event of the order that cannot be read is dead-lettered.
    await pipeline.publish([
      {
        key: paid.orderId,
        value: anEnvelope(
          'order.payment_requested',
          paymentRequestedData({ orderNumber: paid.orderNumber }),
          { orderId: paid.orderId },
        ),
      },
    ]);
    await status.waitFor(() => eventsOf(paid.orderId).some((e) => e.type === 'payment.created'));
    paymentId = String(eventsOf(paid.orderId)[0]?.paymentId);
    await control('POST', `/payments/${paymentId}/simulate`, { action: 'paid' });
    await status.waitFor(() =>
      eventsOf(paid.orderId).some((e) => e.type === 'payment.status_changed'),
    );
    const { currency: _omitted, ...withoutCurrency } = paymentRequestedData();
    await pipeline.publish([
      {
        key: paid.orderId,
        value: anEnvelope('order.installment_added', {} as never, { orderId: paid.orderId }),
      },
      {
        key: blocked.orderId,
        value: anEnvelope('order.payment_requested', withoutCurrency as never, {
          orderId: blocked.orderId,
        }),
      },
    ]);
    await until(
      async () =>
        (await letters(paid.orderId)) >= 1 && (await letters(blocked.orderId)) >= 1
          ? true
          : undefined,
      'the dead letters',
    );
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await browser?.close();
    await db?.end();
    await status?.stop();
    await pipeline?.stop();
  });

  it('sends a signed-out browser to the sign-in page, and back where it was going after', async () => {
    const page = await newPage();
    const answer = await page.goto(
      `${worker.managementUrl}/console/orders/${encodeURIComponent(paid.orderId)}`,
    );
    expect(new URL(page.url()).pathname).toBe('/console/login');
    expect(answer?.status()).toBe(200);
    await expect(page.getByRole('heading', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
    await screenshot(page, join(SHOTS, 'sign-in.png'));

    await page.getByLabel('Your name').fill(OPERATOR);
    await page.getByLabel('Console token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`**/console/orders/${encodeURIComponent(paid.orderId)}`);
    const cookies = await page.context().cookies();
    const session = cookies.find((cookie) => cookie.name === 'pfb_console');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    // Plain HTTP (the management listener): not Secure, or the browser would not send it.
    expect(session?.secure).toBe(false);
  });

  it('refuses a wrong token, and says so next to the form', async () => {
    const page = await newPage();
    await page.goto(`${worker.managementUrl}/console/login`);
    await page.getByLabel('Your name').fill(OPERATOR);
    await page.getByLabel('Console token').fill(`${TOKEN}-wrong`);
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(answer.status()).toBe(401);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not right');
    expect((await page.context().cookies()).map((cookie) => cookie.name)).not.toContain(
      'pfb_console',
    );
    await screenshot(page, join(SHOTS, 'sign-in-wrong-token.png'));
  });

  it('finds the order by its number and reads its whole story, newest last', async () => {
    const page = await newPage();
    await signIn(page);
    await page.getByLabel(/Order id, order number/).fill(paid.orderNumber);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL('**/console/search?q=*');
    const row = page.getByRole('row', { name: new RegExp(paid.orderNumber) });
    await expect(row.count()).resolves.toBe(1);
    await expect(row.textContent()).resolves.toContain('1250.00 NOK');
    await screenshot(page, join(SHOTS, 'search.png'));

    await row.getByRole('link', { name: paid.orderId }).click();
    await page.waitForURL(`**/console/orders/${encodeURIComponent(paid.orderId)}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      `Order ${paid.orderNumber}`,
    );
    const entries = await page.locator('ol.timeline > li').allTextContents();
    const position = (text: string): number => entries.findIndex((entry) => entry.includes(text));
    // Every kind of step, each once at least, in the order it happened.
    expect(position('order.payment_requested')).toBeGreaterThanOrEqual(0);
    expect(position('Payflow call for order.payment_requested')).toBeGreaterThan(-1);
    expect(position('payment.created')).toBeGreaterThan(position('order.payment_requested'));
    expect(position('Webhook')).toBeGreaterThan(position('payment.created'));
    expect(position('payment.status_changed')).toBeGreaterThan(position('Webhook'));
    expect(position('order.installment_added dead-lettered')).toBeGreaterThan(
      position('payment.status_changed'),
    );
    expect(entries[position('order.installment_added dead-lettered')]).toContain('invalid_event');
    expect(entries[position('Payflow call for order.payment_requested')]).toMatch(
      /succeeded[\s\S]*In doubt\s*no/,
    );
    // Status events carry the trace id they were published with.
    expect(entries[position('payment.created')]).toMatch(/Trace id\s*[0-9a-f]{32}/);
    // The ERP event and its Payflow call share the trace of the status event they caused.
    const traceIn = (text: string): string | undefined =>
      /Trace id\s*([0-9a-f]{32})/.exec(entries[position(text)] ?? '')?.[1];
    expect(traceIn('ERP event')).toBe(traceIn('payment.created'));
    expect(traceIn('Payflow call for order.payment_requested')).toBe(traceIn('payment.created'));
    await expect(page.locator('table').first().textContent()).resolves.toContain('1250.00 NOK');
    await expect(page.getByRole('button', { name: /Replay this order/ }).count()).resolves.toBe(1);
    // The ticket text is there without JavaScript; the copy button only with it.
    const ticket = await page.getByLabel('The order and its timeline as text').inputValue();
    expect(ticket).toContain(`Order ${paid.orderId} (number ${paid.orderNumber})`);
    expect(ticket).toContain('invalid_event');
    await expect(page.getByRole('button', { name: 'Copy for ticket' }).isVisible()).resolves.toBe(
      true,
    );
    await screenshot(page, join(SHOTS, 'order.png'));

    const phone = await newPage(PHONE);
    await phone.context().addCookies(await page.context().cookies());
    await phone.goto(`${worker.managementUrl}/console/orders/${encodeURIComponent(paid.orderId)}`);
    const width = await phone.evaluate<number>('document.documentElement.scrollWidth');
    expect(width).toBeLessThanOrEqual(PHONE.width);
    await screenshot(phone, join(SHOTS, 'order-phone.png'));
  });

  it('masks the customer’s contact until asked, and records the asking on the timeline', async () => {
    const page = await newPage();
    await signIn(page, `/console/orders/${encodeURIComponent(blocked.orderId)}`);
    const contact = page.locator('section', {
      has: page.getByRole('heading', { name: 'Customer contact' }),
    });
    await expect(contact.textContent()).resolves.toContain('k•••@example.com');
    await expect(page.content()).resolves.not.toContain('kari@example.com');

    await page.getByRole('button', { name: 'Show e-mail and phone' }).click();
    await page.waitForLoadState();
    await expect(contact.textContent()).resolves.toContain('kari@example.com');
    await expect(contact.textContent()).resolves.toContain('+47 41234567');
    const action = page.locator('ol.timeline > li', { hasText: 'Console action' });
    await expect(action.textContent()).resolves.toContain(`reveal contact by ${OPERATOR}`);
    const { rows } = await db.query<{ actor: string; outcome: string }>(
      `SELECT actor, outcome FROM operator_actions WHERE order_id = $1 AND action = 'reveal_contact'`,
      [blocked.orderId],
    );
    expect(rows).toEqual([{ actor: OPERATOR, outcome: 'done' }]);
    // The address itself is in no row of the audit trail.
    const details = await db.query('SELECT details::text AS d FROM operator_actions');
    expect(JSON.stringify(details.rows)).not.toContain('kari@example.com');
  });

  it('can be used by keyboard, labels every field and keeps text readable (4.5:1) on each page', async () => {
    const page = await newPage();
    await page.goto(`${worker.managementUrl}/console/login`);
    await expect(page.evaluate<string[]>(ACCESSIBILITY_PROBLEMS)).resolves.toEqual([]);
    await signIn(page, `/console/orders/${encodeURIComponent(paid.orderId)}`);
    // The first Tab reaches the skip link, which takes the focus to the content.
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string>('document.activeElement.textContent')).resolves.toBe(
      'Skip to content',
    );
    const outline = await page.evaluate<string>(
      'getComputedStyle(document.activeElement).outlineStyle',
    );
    expect(outline).toBe('solid');
    await page.keyboard.press('Enter');
    await expect(page.evaluate<string>('document.activeElement.id')).resolves.toBe('main');
    for (const path of [
      `/console/search?q=${encodeURIComponent(paid.orderNumber)}`,
      `/console/search`,
      `/console/orders/${encodeURIComponent(paid.orderId)}`,
      `/console/orders/${encodeURIComponent(blocked.orderId)}`,
    ]) {
      await page.goto(`${worker.managementUrl}${path}`);
      const problems = await page.evaluate<string[]>(ACCESSIBILITY_PROBLEMS);
      expect({ path, problems }).toEqual({ path, problems: [] });
    }
  });

  it('refuses a POST without its CSRF token, or with another session’s (403)', async () => {
    const page = await newPage();
    await signIn(page);
    const url = `${worker.managementUrl}/console/orders/${encodeURIComponent(blocked.orderId)}/contact`;
    const bare = await page.request.post(url, { form: { note: 'no token' }, maxRedirects: 0 });
    expect(bare.status()).toBe(403);
    expect(await bare.text()).toContain('CSRF token');
    const forged = await page.request.post(url, { form: { _csrf: 'guessed' }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    const { rows } = await db.query(
      `SELECT 1 FROM operator_actions WHERE order_id = $1 AND action = 'reveal_contact'`,
      [blocked.orderId],
    );
    expect(rows).toHaveLength(1); // only the earlier test's, none from the refused POSTs
    await page.goto(`${worker.managementUrl}/console/search`);
    await page.setContent(await bare.text());
    await screenshot(page, join(SHOTS, 'refused-csrf.png'));
  });

  it('signs out: the session ends at once, and its cookie opens nothing any more', async () => {
    const page = await newPage();
    await signIn(page);
    const before = await page.context().cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/console/login');
    // The old cookie, put back as a copied cookie would be, is refused.
    await page.context().addCookies(before);
    await page.goto(`${worker.managementUrl}/console/search`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    const { rows } = await db.query<{ action: string }>(
      `SELECT action FROM operator_actions WHERE actor = $1 AND action IN ('sign_in', 'sign_out')`,
      [OPERATOR],
    );
    expect(rows.map((row) => row.action)).toContain('sign_out');
  });

  it('ends a session left idle, and asks to sign in again', async () => {
    const page = await newPage();
    await signIn(page);
    await new Promise((resolve) => setTimeout(resolve, SESSION_IDLE_MS + 1_000));
    await page.goto(`${worker.managementUrl}/console/search?q=${paid.orderNumber}`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe(
      `/console/search?q=${paid.orderNumber}`,
    );
  }, 60_000);

  it('is not on the public port (404), only on the management port', async () => {
    const page = await newPage();
    for (const path of ['/console', '/console/login', '/console/search?q=x']) {
      const answer = await page.goto(`${worker.url}${path}`);
      expect(answer?.status()).toBe(404);
    }
    const assets = await page.goto(`${worker.url}/console/assets/console.css`);
    expect(assets?.status()).toBe(404);
    const management = await page.goto(`${worker.managementUrl}/console/login`);
    expect(management?.status()).toBe(200);
    expect(management?.headers()['content-security-policy']).toContain("script-src 'self'");
  });

  it('makes a client that keeps guessing wait (429), even for the right token', async () => {
    const page = await newPage();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) {
      await page.goto(`${worker.managementUrl}/console/login`);
      await page.getByLabel('Your name').fill(OPERATOR);
      await page.getByLabel('Console token').fill(`guess-${attempt}-${TOKEN}`);
      const [answer] = await Promise.all([
        page.waitForResponse((response) => response.request().method() === 'POST'),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      statuses.push(answer.status());
      if (answer.status() === 429) break;
    }
    // Five wrong tokens within a minute, then the wait; the wrong-token test may have
    // guessed once from this address within that minute already.
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((code) => code === 401)).toBe(true);
    expect(statuses.length).toBeGreaterThanOrEqual(5);
    expect(statuses.length).toBeLessThanOrEqual(6);
    await page.goto(`${worker.managementUrl}/console/login`);
    await page.getByLabel('Your name').fill(OPERATOR);
    await page.getByLabel('Console token').fill(TOKEN);
    const [right] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(right.status()).toBe(429);
    expect(Number(right.headers()['retry-after'])).toBeGreaterThan(0);
  });
});
