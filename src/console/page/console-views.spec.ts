import { describe, expect, it } from '@jest/globals';
import { KIND_LABELS, timelineText } from '../../operator/order-timeline/order-timeline.view.js';
import type { OrderTimeline } from '../../operator/order-timeline/order-timeline.view.js';
import type { DeadLetterView } from '../../operator/dead-letters/dead-letter.view.js';
import type { OrderModel } from '../order/order.controller.js';
import type { ConsoleSession } from '../sign-in/session-store.js';
import type { LoginModel } from '../sign-in/sign-in.controller.js';
import { safeNext } from '../access/console-request.js';
import { ConsoleViews } from './console-views.js';

const session: ConsoleSession = {
  operator: 'Kari <script>',
  subject: null,
  verified: false,
  role: 'operator',
  csrfToken: 'csrf-1',
  signedInAt: 0,
  lastSeenAt: 0,
  clientAddress: '127.0.0.1',
};

const timeline: OrderTimeline = {
  order: {
    orderId: 'ord-1',
    organizationId: 'org-1',
    orderNumber: 'SO-10042',
    state: 'open',
    currency: 'NOK',
    blocked: true,
    blockedAt: '2026-11-27T03:00:00.000Z',
    blockedReason: 'rejected_by_payflow',
    createdAt: '2026-11-27T02:00:00.000Z',
    updatedAt: '2026-11-27T03:00:00.000Z',
  },
  payments: [
    {
      id: 'p-1',
      payflowId: 'pf-1',
      state: 'created',
      status: 'pending',
      total: { amount: '1249.50', currency: 'NOK' },
    },
  ],
  entries: [
    {
      at: '2026-11-27T02:00:00.000Z',
      kind: 'erp_event',
      title: 'order.payment_requested',
      outcome: 'processed',
      tone: 'ok',
      facts: [{ label: 'Event id', value: 'e-1' }],
      traceId: '0af7651916cd43dd8448eb211c80319c',
    },
    {
      at: '2026-11-27T03:00:00.000Z',
      kind: 'dead_letter',
      title: 'order.installment_added dead-lettered',
      outcome: 'rejected_by_payflow',
      tone: 'bad',
      facts: [{ label: 'Error', value: '<b>422</b>' }],
      traceId: null,
    },
  ],
  settlement: { lines: [], findings: [] },
};

function aLetter(fields: Partial<DeadLetterView>): DeadLetterView {
  return {
    id: '1',
    eventId: 'e-1',
    eventType: 'order.payment_requested',
    reason: 'invalid_event',
    error: 'invalid order.payment_requested: data.currency: required',
    attempts: 1,
    origin: 'erp.orders.v1/0@1',
    failedAt: '2026-11-27T03:00:00.000Z',
    replayed: false,
    replayedAt: null,
    discarded: false,
    discardedAt: null,
    discardedBy: null,
    discardReason: null,
    supersededBy: null,
    waiting: true,
    discardable: true,
    ...fields,
  };
}

describe('ConsoleViews', () => {
  const views = new ConsoleViews();

  it('renders a page inside the layout, with landmarks, navigation and escaped text', () => {
    const html = views.page<OrderModel>(
      'order/order',
      { title: 'Order SO-10042', section: 'search', session },
      {
        timeline,
        kindLabels: KIND_LABELS,
        ticket: timelineText(timeline),
        contact: { email: 'k•••@example.com', phone: null, fromEventId: 'e-2' },
        contactRevealed: false,
        waitingLetters: 2,
        letters: [
          aLetter({ id: '7', eventId: 'e-7', reason: 'rejected_by_payflow' }),
          aLetter({ id: '8', eventId: 'e-8', reason: 'in_doubt', discardable: false }),
        ],
        inDoubtCalls: 0,
        erasure: null,
      },
    );
    expect(html).toContain('<a class="skip-link" href="#main">');
    expect(html).toContain('<main id="main" tabindex="-1">');
    expect(html).toContain('aria-current="page">Search</a>');
    expect(html).toContain('Kari &lt;script&gt;');
    expect(html).not.toContain('<b>422</b>');
    expect(html).toContain('&lt;b&gt;422&lt;/b&gt;');
    expect(html).toContain('1249.50 NOK');
    expect(html).toContain('0af7651916cd43dd8448eb211c80319c');
    expect(html).toContain('name="_csrf" value="csrf-1"');
    expect(html).toContain('action="/console/dead-letters/replay"');
    // A letter that waits may be discarded, one in doubt not (it takes a verdict).
    expect(html).toContain('action="/console/dead-letters/e-7/discard"');
    expect(html).not.toContain('action="/console/dead-letters/e-8/discard"');
    expect(html.indexOf('order.payment_requested')).toBeLessThan(
      html.indexOf('order.installment_added dead-lettered'),
    );
  });

  it('renders the sign-in page without navigation', () => {
    const html = views.page<LoginModel>(
      'sign-in/login',
      { title: 'Sign in', section: null, session: null },
      {
        next: '/console/search',
        operator: '',
        error: 'That token is not right.',
        loginCsrf: 'l-1',
        tokenSignIn: true,
        oidcHref: null,
      },
    );
    expect(html).toContain('<label for="token">');
    expect(html).toContain('role="alert"');
    expect(html).not.toContain('aria-label="Main"');
  });
});

describe('safeNext', () => {
  it('keeps a console path and refuses anything else', () => {
    expect(safeNext('/console/orders/ord-1')).toBe('/console/orders/ord-1');
    expect(safeNext('/console/search?q=SO-1')).toBe('/console/search?q=SO-1');
    expect(safeNext('//evil.example/console')).toBe('/console/search');
    expect(safeNext('https://evil.example')).toBe('/console/search');
    expect(safeNext('/consoleevil')).toBe('/console/search');
    expect(safeNext('')).toBe('/console/search');
  });
});
