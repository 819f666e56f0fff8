/**
 * The console's operations pages in a real browser (Debian's chromium through
 * playwright-core), against the real worker: Postgres of its own, the run's Kafka, the
 * Payflow sandbox. Failures are made the way production meets them: Payflow refuses a
 * creation once (422: the order's events are dead-lettered and the order blocked), and
 * resets the connection of a creation after or before it processed it (calls in doubt).
 * Then a person, in the browser only: replays the dead letters and watches the order
 * unblock; gives a verdict that Payflow's state refutes and reads why it was refused;
 * resolves one call in doubt with the payment found at Payflow and another as never
 * created; pulls a settlement night again and forgets a missing one. Each action is
 * checked in the database (and on the status topic) and in the audit trail. Screenshots
 * of each page go to docs/console/.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Worker } from '../../src/worker.js';
import { addDays, dateIn } from '../../src/timing/calendar.js';
import {
  anEnvelope,
  anOrderId,
  markedPaidData,
  paymentRequestedData,
} from '../support/builders.js';
import { LAPTOP, PHONE, launchChromium, screenshot } from '../support/browser.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import { sandboxControl } from '../support/sandbox.js';
import { sandboxPayments } from '../orders/support/pipeline.js';

const TOKEN = 'console-token-for-the-operations-test-0123456789';
const OPERATOR = 'Ola Operations';
const SHOTS = join(process.cwd(), 'docs', 'console');

interface StatusEvent {
  type: string;
  orderId: string;
  paymentId: string | null;
}

async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 45_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the console’s operations pages in a browser', () => {
  let pipeline: Pipeline;
  let worker: Worker;
  let status: TopicReader;
  let db: pg.Client;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  /** Refused once by Payflow: its two events are dead letters, the order blocked. */
  const refused = anOrderId('OPS-REFUSED');
  /** Refused the same way: replayed by a filter (reason and time range) instead. */
  const refusedToo = anOrderId('OPS-REFUSED-TOO');
  /** A creation Payflow made, whose answer was lost: in doubt, the payment exists. */
  const made = anOrderId('OPS-MADE');
  /** A creation whose connection was reset before Payflow processed it: in doubt, none. */
  const notMade = anOrderId('OPS-NOTMADE');

  const eventsOf = (orderId: string) =>
    status.json<StatusEvent>().filter((event) => event.orderId === orderId);
  const one = async <R extends pg.QueryResultRow>(text: string, params: unknown[]): Promise<R> => {
    const { rows } = await db.query<R>(text, params);
    const [row] = rows;
    if (row === undefined) throw new Error(`no row: ${text}`);
    return row;
  };
  const letters = async (orderId: string) =>
    (
      await db.query<{ reason: string; replayed: boolean }>(
        `SELECT reason, replayed_at IS NOT NULL AS replayed FROM dead_letters
          WHERE order_id = $1 ORDER BY id`,
        [orderId],
      )
    ).rows;
  const actions = async (action: string, orderId: string | null) =>
    (
      await db.query<{ actor: string; outcome: string; details: Record<string, unknown> }>(
        `SELECT actor, outcome, details FROM operator_actions
          WHERE action = $1 AND order_id IS NOT DISTINCT FROM $2 ORDER BY id`,
        [action, orderId],
      )
    ).rows;

  async function newPage(viewport: { width: number; height: number } = LAPTOP): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    // The console asks before a replay or a verdict (console.js): the person says yes.
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  }

  async function signIn(page: Page, next: string): Promise<void> {
    await page.goto(`${worker.managementUrl}/console/login?next=${encodeURIComponent(next)}`);
    await page.getByLabel('Your name').fill(OPERATOR);
    await page.getByLabel('Console token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === next.split('?')[0]);
  }

  /** A creation in doubt, and a later event of the order parked behind it. */
  async function creationInDoubt(orderId: string, afterProcessing: boolean): Promise<void> {
    await sandboxControl(pipeline.sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments',
      reset: true,
      afterProcessing,
      times: 1,
    });
    await pipeline.publish([
      {
        key: orderId,
        value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      },
      { key: orderId, value: anEnvelope('order.marked_paid', markedPaidData(), { orderId }) },
    ]);
    await until('both events of the order in doubt to be parked', async () =>
      (await letters(orderId)).length === 2 ? true : undefined,
    );
  }

  beforeAll(async () => {
    pipeline = await startPipeline('console_ops', {
      CONSOLE_TOKEN: TOKEN,
      // Generous: on a loaded machine a slow answer must not put a call in doubt by itself.
      PAYFLOW_REQUEST_TIMEOUT: '20s',
      // At least twice the time-out, as the worker demands.
      PAYFLOW_LATE_EFFECT_WINDOW: '40s',
    });
    [worker, status, browser] = await Promise.all([
      pipeline.startWorker({ transport: { retry: { baseDelayMs: 50, maxDelayMs: 200 } } }),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
      launchChromium(),
    ]);
    db = new pg.Client({ connectionString: pipeline.database.url });
    await db.connect();

    // Payflow refuses the creation once (422); the order's next event follows it.
    for (const orderId of [refused, refusedToo]) {
      await sandboxControl(pipeline.sandbox, 'POST', '/faults', {
        method: 'POST',
        path: '/api/payments',
        status: 422,
        times: 1,
      });
      await pipeline.publish([
        {
          key: orderId,
          value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
        },
        { key: orderId, value: anEnvelope('order.marked_paid', markedPaidData(), { orderId }) },
      ]);
      await until('the refused order’s dead letters', async () =>
        (await letters(orderId)).length === 2 ? true : undefined,
      );
    }
    await creationInDoubt(made, true);
    await creationInDoubt(notMade, false);

    // Settlement nights the bridge owes: one missing for org-1 (Payflow has its file),
    // one missing that cannot be had.
    const today = dateIn(new Date(), pipeline.config.SETTLEMENT_TIMEZONE);
    await db.query(
      `INSERT INTO settlement_nights (organization_id, settlement_date, format, status, tracked_by,
                                      attempts, last_attempt_at, last_error)
       VALUES ('org-1', $1::date, 'standard', 'missing', 'cron', 2, now(), 'Payflow answered 503'),
              ('org-gone', $2::date, 'standard', 'missing', 'cron', 5, now(), 'organization unknown')`,
      [addDays(today, -3), addDays(today, -4)],
    );
  }, 240_000);

  afterAll(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await browser?.close();
    await db?.end();
    await status?.stop();
    await pipeline?.stop();
  });

  it('shows the overview: each figure in words with a chart of the last hours', async () => {
    const page = await newPage();
    await signIn(page, '/console');
    await expect(
      page.getByRole('heading', { name: 'Overview', level: 1 }).isVisible(),
    ).resolves.toBe(true);
    for (const label of [
      'Consumer lag',
      'Outbox backlog',
      'Calls in doubt',
      'Dead letters, last 24 h',
      'Webhooks received, last 24 h',
      'Webhooks refused',
      'Last settlement night',
    ]) {
      await expect(page.getByRole('heading', { name: label }).count()).resolves.toBe(1);
    }
    const tile = (id: string) => page.locator(`#tile-${id}`).locator('xpath=..');
    await expect(tile('in-doubt').locator('.tile-value').textContent()).resolves.toBe('2 call(s)');
    await expect(tile('dead-letters').locator('.tile-value').textContent()).resolves.toBe('8');
    await expect(page.locator('svg.spark polyline').count()).resolves.toBeGreaterThanOrEqual(5);
    await screenshot(page, join(SHOTS, 'overview.png'));
  });

  it('lists dead letters by filter, shows one as received, and replays its order until it unblocks', async () => {
    const page = await newPage();
    await signIn(page, '/console/dead-letters');
    await page.getByLabel('Reason').selectOption('rejected_by_payflow');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/reason=rejected_by_payflow/);
    const rows = page.locator('table.letters tbody tr');
    await expect(rows.count()).resolves.toBe(2);
    await expect(rows.filter({ hasText: refused }).count()).resolves.toBe(1);
    await expect(rows.filter({ hasText: refusedToo }).count()).resolves.toBe(1);
    await page.getByLabel('Reason').selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('reason') === '');
    await expect(rows.count()).resolves.toBe(8);
    await screenshot(page, join(SHOTS, 'dead-letters.png'));

    // The refused creation's letter, as it was received.
    await page.goto(`${worker.managementUrl}/console/dead-letters?reason=rejected_by_payflow`);
    await rows.filter({ hasText: refused }).getByRole('link').first().click();
    await expect(
      page.getByRole('heading', { name: /^Dead letter \d+$/ }).isVisible(),
    ).resolves.toBe(true);
    const body = (await page.locator('pre.message').textContent()) ?? '';
    expect(body).toContain('"type": "order.payment_requested"');
    expect(body).toContain(`"orderId": "${refused}"`);
    await expect(page.getByRole('cell', { name: 'x-dlq-reason' }).count()).resolves.toBe(1);
    await screenshot(page, join(SHOTS, 'dead-letter.png'));

    // Personal data is masked (names, addresses, e-mail, phone, VIN, plates) until a person
    // asks to see it; the asking is in the audit trail, which names no personal value.
    for (const personal of [
      'Nordmann',
      'Storgata',
      'kari@example.com',
      '41234567',
      'YV1ABCDEF12345678',
      'EV12345',
    ]) {
      expect(body).not.toContain(personal);
    }
    expect(body).toContain('k•••@example.com');
    await page.getByRole('button', { name: 'Show them' }).click();
    await page.waitForLoadState();
    const shown = (await page.locator('pre.message').textContent()) ?? '';
    expect(shown).toContain('"lastName": "Nordmann"');
    expect(shown).toContain('YV1ABCDEF12345678');
    const reveals = await actions('reveal_contact', refused);
    expect(reveals).toEqual([
      expect.objectContaining({
        actor: OPERATOR,
        outcome: 'done',
        details: expect.objectContaining({
          kinds: 'name,address,email,phone,vin,number_plate',
        }) as unknown,
      }),
    ]);
    expect(JSON.stringify(reveals)).not.toMatch(/Nordmann|kari@example|41234567|YV1ABCDEF/);

    // Replay the order: its two letters go back, the order is unblocked, the payment made.
    expect(
      await one<{ blocked: boolean }>(
        'SELECT blocked_at IS NOT NULL AS blocked FROM orders WHERE order_id = $1',
        [refused],
      ),
    ).toEqual({ blocked: true });
    await page.getByRole('button', { name: 'Replay this order' }).click();
    await page.waitForURL(/\/console\/dead-letters\/replays\//);
    await page.getByText('Done.').waitFor({ timeout: 30_000 });
    await expect(page.locator('.replay-progress').textContent()).resolves.toContain(
      '1 of 1 order(s) · 2 message(s) republished of 2',
    );
    await screenshot(page, join(SHOTS, 'replay.png'));
    expect((await letters(refused)).map((letter) => letter.replayed)).toEqual([true, true]);
    await status.waitFor(() => eventsOf(refused).some((event) => event.type === 'payment.created'));

    await page.getByRole('link', { name: refused }).click();
    await page.waitForURL(`**/console/orders/${encodeURIComponent(refused)}`);
    const state = (await page.locator('.summary .badge').first().textContent()) ?? '';
    expect(state).not.toContain('blocked');
    expect(
      await one<{ blocked: boolean }>(
        'SELECT blocked_at IS NOT NULL AS blocked FROM orders WHERE order_id = $1',
        [refused],
      ),
    ).toEqual({ blocked: false });
    expect(await actions('replay', refused)).toEqual([
      expect.objectContaining({
        actor: OPERATOR,
        outcome: 'done',
        details: expect.objectContaining({ selection: `order ${refused}`, messages: 2 }),
      }),
    ]);
  });

  it('replays what a filter selects (reason and time range), order by order, with its progress', async () => {
    const page = await newPage();
    const to = new Date(Date.now() + 3_600_000).toISOString().slice(0, 16);
    await signIn(
      page,
      `/console/dead-letters?reason=rejected_by_payflow&to=${encodeURIComponent(to)}`,
    );
    const rows = page.locator('table.letters tbody tr');
    // The first refused order is replayed already: only the other one waits.
    await expect(rows.count()).resolves.toBe(1);
    await expect(rows.first().textContent()).resolves.toContain(refusedToo);
    await page.getByRole('button', { name: 'Replay 1 order(s)' }).click();
    await page.waitForURL(/\/console\/dead-letters\/replays\//);
    await page.getByText('Done.').waitFor({ timeout: 30_000 });
    await expect(page.locator('.replay-progress').textContent()).resolves.toContain(
      '1 of 1 order(s) · 2 message(s) republished',
    );
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
      'reason rejected_by_payflow, failed before',
    );
    expect((await letters(refusedToo)).map((letter) => letter.replayed)).toEqual([true, true]);
    await status.waitFor(() =>
      eventsOf(refusedToo).some((event) => event.type === 'payment.created'),
    );
    expect(
      await one<{ blocked: boolean }>(
        'SELECT blocked_at IS NOT NULL AS blocked FROM orders WHERE order_id = $1',
        [refusedToo],
      ),
    ).toEqual({ blocked: false });
    // The calls in doubt were not part of the filter: their letters still wait.
    expect((await letters(made)).map((letter) => letter.replayed)).toEqual([false, false]);
    expect(await actions('replay', refusedToo)).toEqual([
      expect.objectContaining({
        outcome: 'done',
        details: expect.objectContaining({ messages: 2, orders: 1 }),
      }),
    ]);
  });

  it('refuses a verdict Payflow refutes and says why; adopts the payment Payflow made', async () => {
    const page = await newPage();
    await signIn(page, '/console/in-doubt');
    await expect(page.locator('section.doubt').count()).resolves.toBe(2);
    await screenshot(page, join(SHOTS, 'in-doubt.png'));

    const section = page.locator('section.doubt', { hasText: made });
    await section
      .getByLabel('Payflow payment id found in Payflow')
      .fill('ffffffffffffffffffffffff');
    await section.getByRole('button', { name: 'Adopt payment' }).click();
    const notice = page.locator('#verdict-notice');
    await expect(notice.textContent()).resolves.toContain('Verdict refused');
    await expect(notice.textContent()).resolves.toMatch(/refused: .*ffffffffffffffffffffffff/);
    await screenshot(page, join(SHOTS, 'in-doubt-refused.png'));
    expect(
      await one<{ state: string }>(
        `SELECT state FROM command_attempts WHERE order_id = $1 AND command = 'order.payment_requested'`,
        [made],
      ),
    ).toEqual({ state: 'in_doubt' });
    expect((await actions('verdict', made)).map((action) => action.outcome)).toEqual(['refused']);

    const [atPayflow] = await sandboxPayments(pipeline.sandbox, made);
    if (atPayflow === undefined) throw new Error('the sandbox did not make the payment');
    await page
      .locator('section.doubt', { hasText: made })
      .getByLabel('Payflow payment id found in Payflow')
      .fill(atPayflow.id);
    await page
      .locator('section.doubt', { hasText: made })
      .getByRole('button', { name: 'Adopt payment' })
      .click();
    await expect(notice.textContent()).resolves.toContain('Verdict recorded');
    await expect(notice.textContent()).resolves.toContain(
      `adopted Payflow payment ${atPayflow.id}`,
    );
    await status.waitFor(() => eventsOf(made).some((event) => event.type === 'payment.created'));
    expect(
      await one<{ attempt: string; payflowId: string | null; verdict: string; by: string }>(
        `SELECT a.state AS attempt, p.payflow_id AS "payflowId", v.verdict, v.decided_by AS by
           FROM command_attempts a JOIN payments p ON p.id = a.payment_id
           JOIN in_doubt_verdicts v ON v.attempt_id = a.id
          WHERE a.order_id = $1 AND a.command = 'order.payment_requested'`,
        [made],
      ),
    ).toEqual({
      attempt: 'resolved',
      payflowId: atPayflow.id,
      verdict: 'payment_found',
      by: `${OPERATOR} (console)`,
    });
    expect((await actions('verdict', made)).map((action) => action.outcome)).toEqual([
      'refused',
      'done',
    ]);
  });

  it('resolves a call Payflow never took: the creation is sent again', async () => {
    const page = await newPage(PHONE);
    await signIn(page, `/console/in-doubt?orderId=${encodeURIComponent(notMade)}`);
    const section = page.locator('section.doubt', { hasText: notMade });
    await expect(section.count()).resolves.toBe(1);
    // While its request may still land (the late-effect window), "never created" is refused.
    await section.getByRole('button', { name: 'Never created' }).click();
    const notice = page.locator('#verdict-notice');
    await expect(notice.textContent()).resolves.toContain('Verdict refused');
    await expect(notice.textContent()).resolves.toContain('may still apply it until');
    // Once the window has passed since the request left, the verdict is taken.
    await db.query(
      `UPDATE command_attempts SET sent_at = sent_at - interval '1 hour',
              last_sent_at = last_sent_at - interval '1 hour'
        WHERE order_id = $1 AND command = 'order.payment_requested'`,
      [notMade],
    );
    await page
      .locator('section.doubt', { hasText: notMade })
      .getByRole('button', { name: 'Never created' })
      .click();
    await expect(notice.textContent()).resolves.toContain('Verdict recorded');
    await expect(notice.textContent()).resolves.toContain('marked as never taken by Payflow');
    await status.waitFor(() => eventsOf(notMade).some((event) => event.type === 'payment.created'));
    expect(await sandboxPayments(pipeline.sandbox, notMade)).toHaveLength(1);
    expect((await letters(notMade)).every((letter) => letter.replayed)).toBe(true);
    expect(await actions('verdict', notMade)).toEqual([
      expect.objectContaining({
        outcome: 'refused',
        details: expect.objectContaining({ why: 'IN_DOUBT.LATE_EFFECT_WINDOW' }),
      }),
      expect.objectContaining({
        outcome: 'done',
        details: expect.objectContaining({ verdict: 'not_created' }),
      }),
    ]);
    await page.goto(`${worker.managementUrl}/console/in-doubt`);
    await expect(page.getByText('No Payflow call is in doubt.').isVisible()).resolves.toBe(true);
  });

  it('shows settlement nights by organization; pulls one again and forgets another', async () => {
    const page = await newPage();
    await signIn(page, '/console/settlements');
    const today = dateIn(new Date(), pipeline.config.SETTLEMENT_TIMEZONE);
    const pulled = addDays(today, -3);
    const gone = addDays(today, -4);
    await expect(page.getByRole('heading', { name: /^org-1/ }).textContent()).resolves.toContain(
      '0 pulled, 0 changed, 1 missing',
    );
    await screenshot(page, join(SHOTS, 'settlements.png'));

    await page.getByRole('button', { name: `Pull org-1 ${pulled} again` }).click();
    const notice = page.locator('#settlement-notice');
    await expect(notice.textContent()).resolves.toContain(
      `Pulled org-1 ${pulled} standard: stored.`,
    );
    await expect(page.getByRole('heading', { name: /^org-1/ }).textContent()).resolves.toContain(
      '1 pulled, 0 changed, 0 missing',
    );
    expect(
      await one<{ status: string; trackedBy: string }>(
        `SELECT status, tracked_by AS "trackedBy" FROM settlement_nights
          WHERE organization_id = 'org-1' AND settlement_date = $1::date`,
        [pulled],
      ),
    ).toEqual({ status: 'pulled', trackedBy: 'cron' });

    await page.getByRole('button', { name: `Forget org-gone ${gone}` }).click();
    await expect(notice.textContent()).resolves.toContain(
      `org-gone ${gone} standard: forgotten (was missing after 5 attempt(s))`,
    );
    expect(
      await one<{ status: string }>(
        `SELECT status FROM settlement_nights WHERE organization_id = 'org-gone'`,
        [],
      ),
    ).toEqual({ status: 'forgotten' });
    expect((await actions('pull', null)).map((action) => action.outcome)).toEqual(['done']);
    expect((await actions('forget', null)).map((action) => action.outcome)).toEqual(['done']);
  });

  it('refuses every action without its CSRF token (403), and is not on the public port (404)', async () => {
    const page = await newPage();
    await signIn(page, '/console/in-doubt');
    for (const path of [
      '/console/dead-letters/replay',
      `/console/in-doubt/${encodeURIComponent(made)}/resolve`,
      '/console/settlements/pull',
      '/console/settlements/forget',
    ]) {
      const answer = await page.request.post(`${worker.managementUrl}${path}`, {
        form: { orderId: refused, notCreated: '1', org: 'org-1', date: '2026-01-01' },
      });
      expect([path, answer.status()]).toEqual([path, 403]);
    }
    // Nor is any of these pages on the public port, signed in or not.
    for (const path of [
      '/console',
      '/console/dead-letters',
      '/console/in-doubt',
      '/console/settlements',
    ]) {
      const answer = await page.request.get(`${worker.url}${path}`);
      expect([path, answer.status()]).toEqual([path, 404]);
    }
  });
});
