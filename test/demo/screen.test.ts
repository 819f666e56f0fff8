/**
 * The demo's bookkeeping of what came back: duplicates of at-least-once delivery are
 * shown once, missing and unexpected outcomes are found, and every outcome reaches the
 * screen under the ERP event it answers, or (the status events the payer's webhooks
 * caused) under what the payer paid; the nightly settlement file and its lines, the paid
 * orders' named, get a section of their own, and so does the night's reconciliation (its
 * totals, checked against the sum of the lines in minor units, and its one finding).
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
  lineSums,
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
  type:
    | 'settlement.file_available'
    | 'settlement.line'
    | 'settlement.reconciled'
    | 'settlement.exception',
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
      rows: 3,
      badRows: 1,
      badRowSamples: [{ lineNumber: 5, error: 'has 11 field(s), the header needs 14' }],
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

/** The night's totals as the worker publishes them (keyed by the organization). */
function reconciledEvent(night: DemoNight, overrides: Record<string, unknown> = {}) {
  return settlementEvent(
    'settlement.reconciled',
    { eventId: 'the-totals-event' },
    {
      settlementDate: night.date,
      currency: 'NOK',
      grossAmount: '557055.68',
      feeAmount: '8355.84',
      netAmount: '548699.84',
      lines: 3,
      linesMatched: 2,
      findings: 1,
      ...overrides,
    },
  );
}

/** A finding (keyed by the Payflow payment id); by default the unknown payment of line 2. */
function exceptionEvent(
  fields: { paymentId?: string; orderId?: string | null; eventId?: string } = {},
  overrides: Record<string, unknown> = {},
) {
  const paymentId = fields.paymentId ?? '6b02699d624d7f005f469793';
  return settlementEvent(
    'settlement.exception',
    {
      paymentId,
      orderId: fields.orderId ?? null,
      eventId: fields.eventId ?? 'the-finding-event',
    },
    {
      findingId: '1',
      kind: 'unknown_payment',
      subject: `payment:${paymentId}`,
      installmentId: null,
      currency: 'NOK',
      expectedAmount: null,
      settledAmount: '100.00',
      openedAt: '2026-11-22T00:00:02.000Z',
      ...overrides,
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
  const noSettlements: SettlementsShown = {
    night,
    paid: [],
    result: { file: null, lines: [], reconciled: [], exceptions: [] },
  };
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
      lineEvent(night, 3, ['550940.50', '8264.11', '542676.39'], {
        settlementId: '6b02699d624d7f005f4697a0',
        paymentId: '6b02699d624d7f005f46979d',
        orderId: 'SO-10042',
      }),
      lineEvent(night, 4, ['6015.18', '90.23', '5924.95'], {
        settlementId: '6b02699d624d7f005f4697a1',
        paymentId: '6b02699d624d7f005f469799',
        orderId: 'SO-10043',
      }),
    ];
    /** Everything the worker publishes for the night: file, lines, totals, the finding. */
    const wholeNight = [...lines, fileEvent(night), reconciledEvent(night), exceptionEvent()];
    const sectionOf = (screen: readonly string[], heading: string, end: string) =>
      screen.slice(
        screen.findIndex((line) => line.startsWith(heading)),
        screen.findIndex((line) => line.startsWith(end)) - 1,
      );

    it('books yesterday (UTC): one row of another payment, a row cut short, then the paid orders', () => {
      expect(night.date).toBe('2026-11-21');
      expect(night.seed).toEqual({
        organizationId: 'org-1',
        date: '2026-11-21',
        count: 1,
        malformedLines: [expect.stringMatching(/^[0-9a-f]{24},2026-11-21,org-1,/)],
      });
      expect(night.seed.malformedLines?.[0]?.split(',')).toHaveLength(11);
      expect(night.paidOrders).toEqual(['SO-10042', 'SO-10043']);
      expect({ rows: night.rows, badRows: night.badRows }).toEqual({ rows: 3, badRows: 1 });
      // The row of the payment the bridge never created is the night's one finding.
      expect(night.findings).toBe(1);
      expect(night.summary).toBe('org-1 2026-11-21 (yesterday): 1 row, 1 cut short');
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
        'settlements org-1 2026-11-21: settlement.line (1 of 3 arrived)',
        'settlements org-1 2026-11-21: settlement.reconciled (NOK)',
        'settlements org-1 2026-11-21: settlement.exception (0 of 1 arrived)',
      ]);
      expect(settlementProblems(night, some)).toEqual([]);
      const all = nightResult(settlementsOf([...wholeNight].reverse()), night);
      expect(missingSettlements(night, all)).toEqual([]);
      expect(settlementProblems(night, all)).toEqual([]);
      expect(all.lines.map((line) => line.lineNumber)).toEqual([2, 3, 4]);
    });

    it('waits for the reconciliation after the lines: its totals, then its one finding', () => {
      const noTotals = nightResult(settlementsOf([...lines, fileEvent(night)]), night);
      expect(missingSettlements(night, noTotals)).toEqual([
        'settlements org-1 2026-11-21: settlement.reconciled (NOK)',
        'settlements org-1 2026-11-21: settlement.exception (0 of 1 arrived)',
      ]);
      expect(settlementProblems(night, noTotals)).toEqual([]);
      const noFinding = nightResult(
        settlementsOf([...lines, fileEvent(night), reconciledEvent(night), reconciledEvent(night)]),
        night,
      );
      expect(noFinding.reconciled).toHaveLength(1);
      expect(missingSettlements(night, noFinding)).toEqual([
        'settlements org-1 2026-11-21: settlement.exception (0 of 1 arrived)',
      ]);
      expect(settlementProblems(night, noFinding)).toEqual([]);
      // The finding may come before the totals (another key, another partition).
      const findingFirst = nightResult(
        settlementsOf([...lines, fileEvent(night), exceptionEvent(), exceptionEvent()]),
        night,
      );
      expect(findingFirst.exceptions).toHaveLength(1);
      expect(missingSettlements(night, findingFirst)).toEqual([
        'settlements org-1 2026-11-21: settlement.reconciled (NOK)',
      ]);
      expect(settlementProblems(night, findingFirst)).toEqual([]);
      // Totals of another night, or of another organization, are not this night's.
      const others = nightResult(
        settlementsOf([
          ...lines,
          fileEvent(night),
          exceptionEvent(),
          reconciledEvent(night, { settlementDate: '2026-11-20' }),
        ]),
        night,
      );
      expect(others.reconciled).toEqual([]);
      expect(missingSettlements(night, others)).toEqual([
        'settlements org-1 2026-11-21: settlement.reconciled (NOK)',
      ]);
    });

    it('takes the latest totals of the night when they are published again', () => {
      const first = reconciledEvent(night, { linesMatched: 1, findings: 2 });
      const again = settlementEvent(
        'settlement.reconciled',
        { eventId: 'the-totals-again' },
        (JSON.parse(reconciledEvent(night).value) as { data: Record<string, unknown> }).data,
      );
      const result = nightResult(
        settlementsOf([...lines, fileEvent(night), first, again, exceptionEvent()]),
        night,
      );
      expect(result.reconciled.map((totals) => totals.eventId)).toEqual(['the-totals-again']);
      expect(settlementProblems(night, result)).toEqual([]);
    });

    it('fails totals that are not the exact sum of the lines, in minor units', () => {
      const check = (overrides: Record<string, unknown>) =>
        settlementProblems(
          night,
          nightResult(
            settlementsOf([...lines, fileEvent(night), reconciledEvent(night, overrides)]),
            night,
          ),
        );
      expect(check({ grossAmount: '557055.69' })).toEqual([
        'settlement.reconciled org-1 2026-11-21 NOK has grossAmount 557055.69; ' +
          'the sum of its 3 lines is 557055.68',
      ]);
      expect(check({ feeAmount: '8355.8', netAmount: '548699.840' })).toEqual([
        'settlement.reconciled org-1 2026-11-21 NOK has feeAmount 8355.8; ' +
          'the sum of its 3 lines is 8355.84',
      ]);
      expect(check({ lines: 4 })).toEqual([
        'settlement.reconciled org-1 2026-11-21 NOK counts 4 lines; 3 came',
      ]);
      expect(check({ netAmount: 'lots' })).toEqual([
        'settlement.reconciled org-1 2026-11-21 NOK has netAmount lots; ' +
          'the sum of its 3 lines is 548699.84',
      ]);
      // Not before every line came: the totals may come first.
      const early = nightResult(
        settlementsOf([lines[0]!, fileEvent(night), reconciledEvent(night, { grossAmount: '1' })]),
        night,
      );
      expect(settlementProblems(night, early)).toEqual([]);
    });

    it('sums exactly where floating point would not (0.10 + 0.20, a refund)', () => {
      const cents = [
        lineEvent(night, 2, ['0.10', '0.00', '0.10'], { settlementId: 'a', paymentId: 'p1' }),
        lineEvent(night, 3, ['0.20', '0.00', '0.20'], { settlementId: 'b', paymentId: 'p2' }),
        lineEvent(night, 4, ['-0.07', '-0.01', '-0.06'], { settlementId: 'c', paymentId: 'p3' }),
      ];
      expect(0.1 + 0.2 - 0.07).not.toBe(0.23);
      const result = nightResult(
        settlementsOf([
          ...cents,
          fileEvent(night),
          reconciledEvent(night, { grossAmount: '0.23', feeAmount: '-0.01', netAmount: '0.24' }),
        ]),
        night,
      );
      expect(lineSums(result.lines, 'NOK')).toEqual({
        grossAmount: 23,
        feeAmount: -1,
        netAmount: 24,
      });
      expect(
        settlementProblems(night, result).filter((problem) => problem.includes('Amount')),
      ).toEqual([]);
    });

    it('fails another number of findings, an unmatched paid order, or another finding', () => {
      const problems = (...extra: ReceivedMessage[]) =>
        settlementProblems(
          night,
          nightResult(settlementsOf([...lines, fileEvent(night), ...extra]), night),
        );
      expect(problems(reconciledEvent(night, { findings: 2 }))).toEqual([
        'settlement.reconciled org-1 2026-11-21 has 2 findings; the demo booked 1 row of ' +
          "payments not the bridge's (1 unknown_payment) and nothing else to find",
      ]);
      expect(problems(reconciledEvent(night, { findings: 0, linesMatched: 3 }))).toEqual([
        'settlement.reconciled org-1 2026-11-21 has 0 findings; the demo booked 1 row of ' +
          "payments not the bridge's (1 unknown_payment) and nothing else to find",
        "settlement.reconciled org-1 2026-11-21 matched 3 lines; the paid orders' 2 lines " +
          'should all match',
      ]);
      const mismatch = exceptionEvent(
        { paymentId: '6b02699d624d7f005f46979d', orderId: 'SO-10042', eventId: 'other' },
        { kind: 'amount_mismatch', expectedAmount: '550940.50', settledAmount: '550940.00' },
      );
      expect(problems(reconciledEvent(night), exceptionEvent(), mismatch)).toEqual([
        '2 settlement.exceptions of org-1 came; the demo expects 1',
        'settlement.exception amount_mismatch of payment 6b02699d624d7f005f46979d ' +
          '(order SO-10042): the demo expects only unknown_payment of the rows not ours',
      ]);
      expect(problems(mismatch)).toEqual([
        'settlement.exception amount_mismatch of payment 6b02699d624d7f005f46979d ' +
          '(order SO-10042): the demo expects only unknown_payment of the rows not ours',
      ]);
    });

    it('ignores other nights and topics, and fails a file whose rows do not add up', () => {
      const other = fileEvent(night, { dateFrom: '2026-11-20', dateTo: '2026-11-20' });
      expect(nightResult(settlementsOf([other, ...everything]), night).file).toBeNull();
      const short = nightResult(settlementsOf([fileEvent(night, { rows: 2, badRows: 2 })]), night);
      expect(settlementProblems(night, short)).toEqual([
        'settlement file org-1 2026-11-21 has 2 rows and 2 bad rows; the sandbox holds 3 and 1',
      ]);
    });

    it('fails a night whose lines do not name a paid order', () => {
      const notOurs = lineEvent(night, 4, ['6015.18', '90.23', '5924.95'], {
        settlementId: '6b02699d624d7f005f4697a1',
        paymentId: '6b02699d624d7f005f469799',
      });
      const result = nightResult(
        settlementsOf([lines[0]!, lines[1]!, notOurs, fileEvent(night)]),
        night,
      );
      expect(settlementProblems(night, result)).toEqual([
        'no settlement.line of org-1 2026-11-21 names order SO-10043, whose payment is booked on that night',
      ]);
    });

    it('shows the file, its bad row by line number and its lines with their orders, within 100 columns', () => {
      const result = nightResult(settlementsOf(wholeNight), night);
      const screen = renderScreen({
        orders,
        outcomes: outcomesOf(everything),
        paid: PAID,
        settlements: { night, paid: PAID, result },
        placement,
        elapsedMs: 1,
        style: styleFor(false),
      });
      const section = sectionOf(screen, 'Nightly settlements', 'Reconciliation');
      expect(section).toEqual([
        'Nightly settlements  cron every 2 s in this demo (*/2 * * * * * UTC); by default 02:30 Europe/Oslo',
        '  → sandbox             org-1 2026-11-21 (yesterday): 1 row, 1 cut short; then 2 the payer paid',
        '  ← settlement.file_available  org-1 2026-11-21, format standard, version 1',
        '                        3 rows, 1 bad row, 703 bytes stored, sha256 b3ea5dafb1d2ea4c…',
        '                        ✗ line 5  has 11 field(s), the header needs 14',
        '  ← settlement.line ×3  payment    type         gross      fee        net',
        '    line 2              …5f469793  payment     100.00     1.50      98.50 NOK  not ours',
        '    line 3              …5f46979d  payment  550940.50  8264.11  542676.39 NOK  order SO-10042',
        '    line 4              …5f469799  payment    6015.18    90.23    5924.95 NOK  order SO-10043',
      ]);
      expect(screen[screen.findIndex((line) => line.startsWith('Reconciliation')) - 1]).toBe('');
      for (const line of section) expect(line.length).toBeLessThanOrEqual(100);
    });

    it("shows the night's reconciliation: totals, the one finding, and what to run next", () => {
      const result = nightResult(settlementsOf(wholeNight), night);
      const screen = renderScreen({
        orders,
        outcomes: outcomesOf(everything),
        paid: PAID,
        settlements: { night, paid: PAID, result },
        placement,
        elapsedMs: 1,
        style: styleFor(false),
      });
      const start = screen.findIndex((line) => line.startsWith('Reconciliation'));
      expect(screen[start - 1]).toBe('');
      const section = sectionOf(screen, 'Reconciliation', 'Where it ran');
      expect(section).toEqual([
        'Reconciliation  org-1 2026-11-21, by the worker after the pull (docs/finance.md)',
        '  ← settlement.reconciled  NOK: 3 lines, 2 matched, 1 finding',
        '                        gross 557055.68, fee 8355.84, net 548699.84 NOK = the sum of its 3 lines',
        '  ← settlement.exception  finding 1: unknown_payment, payment 6b02699d624d7f005f469793, not ours',
        '                        expected – (none due), settled 100.00 NOK',
        '  next                  npx payflow-bridge settlements reconcile --csv FILE (lines, totals)',
        '                        npx payflow-bridge settlements acknowledge 1 --reason TEXT',
        '                        /console/reconciliation (management port, with CONSOLE_TOKEN set)',
      ]);
      expect(screen[screen.indexOf('Where it ran') - 1]).toBe('');
      for (const line of section) expect(line.length).toBeLessThanOrEqual(100);
    });

    it('shows totals that are not the sum of the lines, and an installment of a finding', () => {
      const result = nightResult(
        settlementsOf([
          ...lines,
          fileEvent(night),
          reconciledEvent(night, { grossAmount: '557055.60', findings: 1 }),
          exceptionEvent(
            { paymentId: '6b02699d624d7f005f469799', orderId: 'SO-10043' },
            {
              kind: 'amount_mismatch',
              subject: 'installment:6b02699d624d7f005f46979a',
              installmentId: '6b02699d624d7f005f46979a',
              expectedAmount: '6015.18',
              settledAmount: '6015.10',
              findingId: '7',
            },
          ),
        ]),
        night,
      );
      const section = sectionOf(
        renderScreen({
          orders,
          outcomes: outcomesOf(everything),
          paid: PAID,
          settlements: { night, paid: PAID, result },
          placement,
          elapsedMs: 1,
          style: styleFor(false),
        }),
        'Reconciliation',
        'Where it ran',
      );
      expect(section.slice(1, 6)).toEqual([
        '  ← settlement.reconciled  NOK: 3 lines, 2 matched, 1 finding',
        '                        gross 557055.60, fee 8355.84, net 548699.84 NOK',
        '                        ≠ the 3 lines: gross 557055.68, fee 8355.84, net 548699.84 NOK',
        '  ← settlement.exception  finding 7: amount_mismatch, payment 6b02699d624d7f005f469799, ' +
          'installment 6b02699d624d7f005f46979a, order SO-10043',
        '                        expected 6015.18, settled 6015.10 NOK',
      ]);
      expect(section).toContain(
        '                        npx payflow-bridge settlements acknowledge 7 --reason TEXT',
      );
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
        '  \u001b[36m→\u001b[39m sandbox             org-1 2026-11-21 (yesterday): 1 row, 1 cut short' +
          '\u001b[31m; the payer paid nothing\u001b[39m',
      );
      // No file, no reconciliation to show.
      expect(screen.some((line) => line.includes('Reconciliation'))).toBe(false);
      const partialOf = (messages: readonly ReceivedMessage[]) =>
        renderScreen({
          orders,
          outcomes: outcomesOf(everything),
          paid: PAID,
          settlements: { night, paid: PAID, result: nightResult(settlementsOf(messages), night) },
          placement,
          elapsedMs: 1,
          style: styleFor(false),
        });
      const partial = partialOf([lines[1]!, fileEvent(night)]);
      expect(partial).toContain('  … 1 of 3 settlement.lines came');
      expect(partial).toContain('  … no settlement.reconciled for org-1 2026-11-21');
      expect(partialOf([...lines, fileEvent(night), reconciledEvent(night)])).toContain(
        '  … 0 of 1 settlement.exception came',
      );
    });
  });
});
