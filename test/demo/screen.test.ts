/**
 * The demo's bookkeeping of what came back: duplicates of at-least-once delivery are
 * shown once, missing and unexpected outcomes are found, and every outcome reaches the
 * screen under the ERP event it answers, or (the status events the payer's webhooks
 * caused) under what the payer paid; the nightly settlement file and its lines, the paid
 * orders' named, get a section of their own.
 */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { TOPICS, type ReceivedMessage } from '../../demo/kafka.js';
import type { Paid } from '../../demo/payer.js';
import { demoOrders, type DemoOrder } from '../../demo/scenario.js';
import {
  missingOutcomes,
  unanswered,
  outcomesOf,
  renderScreen,
  styleFor,
  failedOutcomes,
  wrap,
  type SettlementsShown,
} from '../../demo/screen.js';
import {
  demoNight,
  missingSettlements,
  nightResult,
  settlementProblems,
  settlementsOf,
  type DemoNight,
} from '../../demo/settlements.js';

const placement = {
  kafka: 'librdkafka mock cluster',
  bootstrapServers: '127.0.0.1:1',
  brokers: 1,
  sandboxUrl: 'http://127.0.0.1:2',
  sandboxPid: 2,
  workerPid: 3,
  workerUrl: 'http://127.0.0.1:4',
  managementUrl: 'http://127.0.0.1:5',
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/payflow_bridge_demo',
};

function sourceId(order: DemoOrder, index: number): string {
  return (JSON.parse(order.messages[index]?.value ?? '{}') as { eventId: string }).eventId;
}

function status(order: DemoOrder, index: number, type: string, eventId: string = randomUUID()) {
  return {
    topic: TOPICS.status,
    key: order.orderId,
    value: JSON.stringify({
      eventId,
      type,
      orderId: order.orderId,
      paymentId: '0123456789abcdef01234567',
      data: { sourceEventId: sourceId(order, index), currency: 'NOK' },
    }),
    headers: {},
  } satisfies ReceivedMessage;
}

/** A status event a webhook caused: it answers no ERP event (no sourceEventId). */
function webhookStatus(order: DemoOrder, type: string, data: Record<string, unknown>) {
  return {
    topic: TOPICS.status,
    key: order.orderId,
    value: JSON.stringify({
      eventId: randomUUID(),
      type,
      orderId: order.orderId,
      paymentId: '0123456789abcdef01234567',
      data,
    }),
    headers: {},
  } satisfies ReceivedMessage;
}

const webhooksTaken = [
  { kind: 'payment-update', delivered: true, status: 200, problem: null },
  { kind: 'status-update', delivered: true, status: 200, problem: null },
];

const PAID: readonly Paid[] = [
  {
    orderId: 'SO-10042',
    action: 'paid',
    paymentId: '6b02699d624d7f005f46979d',
    installmentId: null,
    installmentRef: null,
    amount: '550940.50',
    currency: 'NOK',
    webhooks: webhooksTaken,
  },
  {
    orderId: 'SO-10043',
    action: 'installment_paid',
    paymentId: '6b02699d624d7f005f469799',
    installmentId: '6b02699d624d7f005f46979a',
    installmentRef: '1',
    amount: '6015.18',
    currency: 'NOK',
    webhooks: webhooksTaken,
  },
];

const FILE_ID = '3f0c8d52-9a41-4c1e-b7a2-5d6e8f901234';

function settlementEvent(
  type: 'settlement.file_available' | 'settlement.line',
  fields: { orderId?: string | null; paymentId?: string | null; eventId?: string },
  data: Record<string, unknown>,
) {
  return {
    topic: TOPICS.settlements,
    key: fields.paymentId ?? 'org-1',
    value: JSON.stringify({
      eventId: fields.eventId ?? randomUUID(),
      type,
      occurredAt: '2026-11-22T00:00:02.000Z',
      organizationId: 'org-1',
      orderId: fields.orderId ?? null,
      paymentId: fields.paymentId ?? null,
      data,
    }),
    headers: { 'x-event-type': type },
  } satisfies ReceivedMessage;
}

function fileEvent(night: DemoNight, overrides: Record<string, unknown> = {}) {
  return settlementEvent(
    'settlement.file_available',
    { eventId: 'the-file-event' },
    {
      fileId: FILE_ID,
      dateFrom: night.date,
      dateTo: night.date,
      format: 'standard',
      version: 1,
      replacesFileId: null,
      rows: 4,
      badRows: 1,
      badRowSamples: [{ lineNumber: 6, error: 'has 11 field(s), the header needs 14' }],
      sizeBytes: 703,
      sha256: 'b3ea5dafb1d2ea4c9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7',
      pulledAt: '2026-11-22T00:00:02.000Z',
      ...overrides,
    },
  );
}

function lineEvent(
  night: DemoNight,
  lineNumber: number,
  amounts: [string, string, string],
  ids: { settlementId: string; paymentId: string; orderId?: string },
) {
  const [grossAmount, feeAmount, netAmount] = amounts;
  return settlementEvent(
    'settlement.line',
    { orderId: ids.orderId ?? null, paymentId: ids.paymentId },
    {
      fileId: FILE_ID,
      lineNumber,
      settlementId: ids.settlementId,
      settlementDate: night.date,
      paymentNumber: 1000 + lineNumber,
      installmentId: null,
      internalRef: ids.orderId ?? null,
      orderNumber: `SB-${1000 + lineNumber}`,
      transactionType: Number(grossAmount) < 0 ? 'refund' : 'payment',
      currency: 'NOK',
      grossAmount,
      feeAmount,
      netAmount,
      bookedAt: `${night.date}T12:00:00.000Z`,
    },
  );
}

function letter(order: DemoOrder, index: number, reason: string, offset: string) {
  return {
    topic: TOPICS.dlq,
    key: order.orderId,
    value: order.messages[index]?.value ?? '',
    headers: {
      'x-dlq-reason': reason,
      'x-dlq-error': 'it failed',
      'x-dlq-original-partition': '0',
      'x-dlq-original-offset': offset,
    },
  } satisfies ReceivedMessage;
}

describe('demo outcomes', () => {
  const orders = demoOrders(new Date('2026-11-22T10:00:00Z'));
  const [single, plan, tradeIn, invalid, notJson] = orders as [
    DemoOrder,
    DemoOrder,
    DemoOrder,
    DemoOrder,
    DemoOrder,
  ];
  const paidInFull = webhookStatus(single, 'payment.status_changed', {
    providerStatus: 'SUCCESS',
    previousProviderStatus: null,
    status: 'paid',
    source: 'webhook',
  });
  const installmentChange = (ref: string, previous: string, next: string) =>
    webhookStatus(plan, 'installment.status_changed', {
      installmentId: `6b02699d624d7f005f4697a${ref}`,
      installmentRef: ref,
      providerStatus: next,
      previousProviderStatus: previous,
    });
  const everything: ReceivedMessage[] = [
    status(single, 0, 'payment.created', 'the-same-event'),
    status(plan, 0, 'payment.created'),
    status(plan, 1, 'installment.added'),
    status(tradeIn, 0, 'payment.created'),
    status(tradeIn, 1, 'payment.cancelled'),
    letter(invalid, 0, 'invalid_event', '1'),
    letter(notJson, 0, 'invalid_json', '2'),
    paidInFull,
    installmentChange('1', 'CREATED', 'SENT'),
    installmentChange('2', 'CREATED', 'SENT'),
    installmentChange('1', 'SENT', 'PAID'),
  ];
  const night = demoNight(new Date('2026-11-22T10:00:00Z'), ['SO-10042', 'SO-10043']);
  const noSettlements: SettlementsShown = { night, paid: [], result: { file: null, lines: [] } };
  const screenOf = (messages: readonly ReceivedMessage[], paid: readonly Paid[] = PAID) =>
    renderScreen({
      orders,
      outcomes: outcomesOf(messages),
      paid,
      settlements: { ...noSettlements, paid },
      placement,
      elapsedMs: 1,
      style: styleFor(false),
    });

  it('plays the payer on the single payment and the plan, waiting for webhook-driven events', () => {
    expect(orders.map((order) => order.payer?.action ?? null)).toEqual([
      'paid',
      'installment_paid',
      null,
      null,
      null,
    ]);
    expect(single.expected).toContainEqual({
      topic: 'status',
      type: 'payment.status_changed',
      data: { status: 'paid', source: 'webhook' },
    });
  });

  it('knows when everything arrived, counting a redelivered event once', () => {
    const duplicate = status(single, 0, 'payment.created', 'the-same-event');
    const outcomes = outcomesOf([
      ...everything,
      duplicate,
      letter(invalid, 0, 'invalid_event', '1'),
    ]);
    expect(outcomes).toHaveLength(11);
    expect(missingOutcomes(orders, outcomes)).toEqual([]);
    expect(failedOutcomes(orders, outcomes)).toEqual([]);
  });

  it('wants the status change from a webhook, not from the poller', () => {
    const polled = webhookStatus(single, 'payment.status_changed', {
      providerStatus: 'SUCCESS',
      status: 'paid',
      source: 'poll',
    });
    const outcomes = outcomesOf([...everything.filter((m) => m !== paidInFull), polled]);
    expect(missingOutcomes(orders, outcomes)).toEqual([
      'SO-10042: payment.status_changed (status paid, source webhook)',
    ]);
    expect(failedOutcomes(orders, outcomes)).toEqual([]);
  });

  it("knows which of an order's ERP events are still unanswered (the payer waits for them)", () => {
    const outcomes = outcomesOf([status(plan, 0, 'payment.created')]);
    expect(unanswered(plan, outcomes).map((message) => message.summary)).toEqual([
      'order.installment_added  extra-1, 2027-03-01, 1500.00',
    ]);
    expect(unanswered(single, outcomes)).toHaveLength(1);
    expect(unanswered(plan, outcomesOf(everything))).toEqual([]);
  });

  it('shows what the payer paid, the webhooks it took, and the status events they caused', () => {
    const screen = screenOf(everything);
    const payer = screen.findIndex((line) => line.includes('→ payer pays 550940.50'));
    expect(screen.slice(payer, payer + 2)).toEqual([
      '  → payer pays 550940.50 NOK in full; HTTPS webhooks: payment-update 200, status-update 200',
      '  ← payment.status_changed  status paid (Payflow SUCCESS; from the webhook)',
    ]);
    const added = screen.findIndex((line) => line.includes('← installment.added'));
    expect(screen.slice(added + 1, added + 3)).toEqual([
      '  → payer pays installment 1, 6015.18 NOK; HTTPS webhooks: payment-update 200, status-update 200',
      '  ← installment.status_changed ×3  1: CREATED → SENT → PAID · 2: CREATED → SENT',
    ]);
    for (const line of screen.slice(0, screen.indexOf('Where it ran'))) {
      if (!line.includes('installments 1:')) expect(line.length).toBeLessThanOrEqual(100);
    }
    expect(screen[1]).toBe(
      '7 ERP events and 2 payments by the payer; back came 9 status events and 2 dead letters in 0.0 s.',
    );
  });

  it('says when a webhook was not taken, or the payer did not get to pay', () => {
    const refused: Paid = {
      ...PAID[0]!,
      webhooks: [
        { kind: 'payment-update', delivered: false, status: 0, problem: 'self-signed certificate' },
        { kind: 'status-update', delivered: false, status: 503, problem: null },
      ],
    };
    const screen = screenOf(everything, [refused]);
    expect(screen).toContain(
      '  → payer pays 550940.50 NOK in full; HTTPS webhooks: payment-update self-signed certificate, ' +
        'status-update 503',
    );
    expect(screen).toContain('  … the payer did not get to pay');
  });

  it('shows an extra status event without failing', () => {
    const extra = status(tradeIn, 1, 'payment.status_changed');
    const outcomes = outcomesOf([...everything, extra]);
    expect(failedOutcomes(orders, outcomes)).toEqual([]);
    const screen = renderScreen({
      orders,
      outcomes,
      paid: [],
      settlements: noSettlements,
      placement,
      elapsedMs: 1,
      style: styleFor(false),
    });
    const cancelled = screen.findIndex((line) => line.includes('← payment.cancelled'));
    expect(screen[cancelled + 1]).toContain('← payment.status_changed');
  });

  it('names what is missing', () => {
    const outcomes = outcomesOf(everything.slice(0, 4));
    expect(missingOutcomes(orders, outcomes)).toEqual([
      'SO-10042: payment.status_changed (status paid, source webhook)',
      'SO-10043: installment.status_changed (installmentRef 1, providerStatus PAID)',
      'SO-10044: payment.cancelled',
      'SO-10045: dead letter invalid_event',
      'SO-10046: dead letter invalid_json',
    ]);
  });

  it('flags a dead letter of an event that should have worked, and shows it under that event', () => {
    const outcomes = outcomesOf([
      status(plan, 0, 'payment.created'),
      letter(plan, 1, 'mapping_failed', '9'),
    ]);
    const failed = failedOutcomes(orders, outcomes);
    expect(failed.map((outcome) => outcome.message.headers['x-dlq-reason'])).toEqual([
      'mapping_failed',
    ]);
    const screen = renderScreen({
      orders,
      outcomes,
      paid: [],
      settlements: noSettlements,
      placement,
      elapsedMs: 1234,
      style: styleFor(false),
    });
    const added = screen.findIndex((line) => line.includes('→ order.installment_added'));
    expect(screen[added + 1]).toContain('✗ dead letter');
    expect(screen[added + 2]).toContain('x-dlq-reason mapping_failed');
    expect(screen.filter((line) => line.includes('nothing came back'))).toHaveLength(5);
    expect(screen.filter((line) => line.includes('the payer did not get to pay'))).toHaveLength(2);
  });

  it('wraps long values at spaces', () => {
    expect(wrap('aaa bbb ccc', 7)).toEqual(['aaa bbb', 'ccc']);
    expect(wrap('averyveryverylongword x', 5)).toEqual(['averyveryverylongword', 'x']);
  });

  describe('nightly settlements', () => {
    const lines = [
      lineEvent(night, 2, ['100.00', '1.50', '98.50'], {
        settlementId: '6b02699d624d7f005f469792',
        paymentId: '6b02699d624d7f005f469793',
      }),
      lineEvent(night, 3, ['-101.07', '-1.52', '-99.55'], {
        settlementId: '6b02699d624d7f005f469794',
        paymentId: '6b02699d624d7f005f469795',
      }),
      lineEvent(night, 4, ['550940.50', '8264.11', '542676.39'], {
        settlementId: '6b02699d624d7f005f4697a0',
        paymentId: '6b02699d624d7f005f46979d',
        orderId: 'SO-10042',
      }),
      lineEvent(night, 5, ['6015.18', '90.23', '5924.95'], {
        settlementId: '6b02699d624d7f005f4697a1',
        paymentId: '6b02699d624d7f005f469799',
        orderId: 'SO-10043',
      }),
    ];

    it('books yesterday (UTC): two rows of other payments, a row cut short, then the paid orders', () => {
      expect(night.date).toBe('2026-11-21');
      expect(night.seed).toEqual({
        organizationId: 'org-1',
        date: '2026-11-21',
        count: 2,
        malformedLines: [expect.stringMatching(/^[0-9a-f]{24},2026-11-21,org-1,/)],
      });
      expect(night.seed.malformedLines?.[0]?.split(',')).toHaveLength(11);
      expect(night.paidOrders).toEqual(['SO-10042', 'SO-10043']);
      expect({ rows: night.rows, badRows: night.badRows }).toEqual({ rows: 4, badRows: 1 });
    });

    it("waits for the night's file event and all its lines, counting a redelivery once", () => {
      const onlyLines = nightResult(settlementsOf([lines[0]!, lines[1]!]), night);
      expect(missingSettlements(night, onlyLines)).toEqual([
        'settlements org-1 2026-11-21: settlement.file_available',
      ]);
      const some = nightResult(
        settlementsOf([lines[0]!, fileEvent(night), lines[0]!, fileEvent(night)]),
        night,
      );
      expect(some.lines).toHaveLength(1);
      expect(missingSettlements(night, some)).toEqual([
        'settlements org-1 2026-11-21: settlement.line (1 of 4 arrived)',
      ]);
      expect(settlementProblems(night, some)).toEqual([]);
      const all = nightResult(settlementsOf([...lines].reverse().concat(fileEvent(night))), night);
      expect(missingSettlements(night, all)).toEqual([]);
      expect(settlementProblems(night, all)).toEqual([]);
      expect(all.lines.map((line) => line.lineNumber)).toEqual([2, 3, 4, 5]);
    });

    it('ignores other nights and topics, and fails a file whose rows do not add up', () => {
      const other = fileEvent(night, { dateFrom: '2026-11-20', dateTo: '2026-11-20' });
      expect(nightResult(settlementsOf([other, ...everything]), night).file).toBeNull();
      const short = nightResult(settlementsOf([fileEvent(night, { rows: 2, badRows: 2 })]), night);
      expect(settlementProblems(night, short)).toEqual([
        'settlement file org-1 2026-11-21 has 2 rows and 2 bad rows; the sandbox holds 4 and 1',
      ]);
    });

    it('fails a night whose lines do not name a paid order', () => {
      const notOurs = lineEvent(night, 5, ['6015.18', '90.23', '5924.95'], {
        settlementId: '6b02699d624d7f005f4697a1',
        paymentId: '6b02699d624d7f005f469799',
      });
      const result = nightResult(
        settlementsOf([lines[0]!, lines[1]!, lines[2]!, notOurs, fileEvent(night)]),
        night,
      );
      expect(settlementProblems(night, result)).toEqual([
        'no settlement.line of org-1 2026-11-21 names order SO-10043, whose payment is booked on that night',
      ]);
    });

    it('shows the file, its bad row by line number and its lines with their orders, within 100 columns', () => {
      const result = nightResult(settlementsOf([...lines, fileEvent(night)]), night);
      const screen = renderScreen({
        orders,
        outcomes: outcomesOf(everything),
        paid: PAID,
        settlements: { night, paid: PAID, result },
        placement,
        elapsedMs: 1,
        style: styleFor(false),
      });
      const start = screen.findIndex((line) => line.startsWith('Nightly settlements'));
      const end = screen.indexOf('Where it ran');
      expect(start).toBeGreaterThan(0);
      const section = screen.slice(start, end - 1);
      expect(section).toEqual([
        'Nightly settlements  cron every 2 s in this demo (*/2 * * * * * UTC); by default 02:30 Europe/Oslo',
        '  → sandbox             org-1 2026-11-21 (yesterday): 2 rows, 1 cut short; then 2 the payer paid',
        '  ← settlement.file_available  org-1 2026-11-21, format standard, version 1',
        '                        4 rows, 1 bad row, 703 bytes stored, sha256 b3ea5dafb1d2ea4c…',
        '                        ✗ line 6  has 11 field(s), the header needs 14',
        '  ← settlement.line ×4  payment    type         gross      fee        net',
        '    line 2              …5f469793  payment     100.00     1.50      98.50 NOK  not ours',
        '    line 3              …5f469795  refund     -101.07    -1.52     -99.55 NOK  not ours',
        '    line 4              …5f46979d  payment  550940.50  8264.11  542676.39 NOK  order SO-10042',
        '    line 5              …5f469799  payment    6015.18    90.23    5924.95 NOK  order SO-10043',
      ]);
      expect(screen[end - 1]).toBe('');
      for (const line of section) expect(line.length).toBeLessThanOrEqual(100);
    });

    it('says what did not come', () => {
      const screen = renderScreen({
        orders,
        outcomes: outcomesOf(everything),
        paid: [],
        settlements: noSettlements,
        placement,
        elapsedMs: 1,
        style: styleFor(true),
      });
      expect(screen).toContain(
        '  \u001b[31m… no settlement.file_available for org-1 2026-11-21\u001b[39m',
      );
      expect(screen).toContain(
        '  \u001b[36m→\u001b[39m sandbox             org-1 2026-11-21 (yesterday): 2 rows, 1 cut short' +
          '\u001b[31m; the payer paid nothing\u001b[39m',
      );
      const partial = renderScreen({
        orders,
        outcomes: outcomesOf(everything),
        paid: PAID,
        settlements: {
          night,
          paid: PAID,
          result: nightResult(settlementsOf([lines[1]!, fileEvent(night)]), night),
        },
        placement,
        elapsedMs: 1,
        style: styleFor(false),
      });
      expect(partial).toContain('  … 1 of 4 settlement.lines came');
    });
  });
});
