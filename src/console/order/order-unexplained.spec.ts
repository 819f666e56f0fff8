import { describe, expect, it } from '@jest/globals';
import {
  KIND_LABELS,
  timelineText,
  type OrderTimeline,
} from '../../operator/order-timeline/order-timeline.view.js';
import { ConsoleViews } from '../page/console-views.js';
import type { ConsoleSession } from '../sign-in/session-store.js';

const session: ConsoleSession = {
  operator: 'kari',
  subject: null,
  verified: false,
  role: 'operator',
  csrfToken: 'csrf-1',
  signedInAt: 0,
  lastSeenAt: 0,
  clientAddress: '127.0.0.1',
};

function timeline(tone: 'bad' | 'info'): OrderTimeline {
  return {
    order: {
      orderId: 'ord-1',
      organizationId: 'org-1',
      orderNumber: 'SO-10042',
      state: 'open',
      currency: 'NOK',
      blocked: false,
      blockedAt: null,
      blockedReason: null,
      createdAt: '2026-11-27T02:00:00.000Z',
      updatedAt: '2026-11-27T03:00:00.000Z',
    },
    payments: [],
    entries: [
      {
        at: '2026-11-27T04:00:00.000Z',
        kind: 'unexplained_effect',
        title:
          'document pf-doc-2 (<img src=x onerror=alert(1)>.pdf) at Payflow that no event of this order explains',
        outcome: tone === 'bad' ? 'unexplained' : 'explained since',
        tone,
        facts: [{ label: 'File name', value: '<img src=x onerror=alert(1)>.pdf' }],
        traceId: null,
      },
    ],
    settlement: { lines: [], findings: [] },
  };
}

function page(tone: 'bad' | 'info'): string {
  const t = timeline(tone);
  return new ConsoleViews().page(
    'order/order',
    { title: 'Order SO-10042', section: 'search', session },
    {
      timeline: t,
      kindLabels: KIND_LABELS,
      ticket: timelineText(t),
      contact: null,
      contactRevealed: false,
      waitingLetters: 0,
      letters: [],
      inDoubtCalls: 0,
      erasure: null,
    },
  );
}

describe("the order page's effects no event explains", () => {
  it('shows them on the timeline, escaped like everything else, with a notice above', () => {
    const html = page('bad');
    expect(html).toContain('Found at Payflow');
    expect(html).toContain('id="unexplained-notice"');
    expect(html).toContain(
      'Payflow holds 1 installment or document that no event of this order explains',
    );
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;.pdf');
    expect(timelineText(timeline('bad'))).toContain('Found at Payflow · document pf-doc-2');
  });

  it('has no notice once the bridge recorded them after all', () => {
    const html = page('info');
    expect(html).not.toContain('id="unexplained-notice"');
    expect(html).toContain('explained since');
  });
});
