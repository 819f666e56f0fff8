/**
 * The demo's bookkeeping of what came back: duplicates of at-least-once delivery are
 * shown once, missing and unexpected outcomes are found, and every outcome reaches the
 * screen under the ERP event it answers; the nightly settlement file and its lines get a
 * section of their own.
 */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { TOPICS, type ReceivedMessage } from '../../demo/kafka.js';
import { demoOrders, type DemoOrder } from '../../demo/scenario.js';
import {
  missingOutcomes,
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
  const everything: ReceivedMessage[] = [
    status(single, 0, 'payment.created', 'the-same-event'),
    status(plan, 0, 'payment.created'),
    status(plan, 1, 'installment.added'),
    status(tradeIn, 0, 'payment.created'),
    status(tradeIn, 1, 'payment.cancelled'),
    letter(invalid, 0, 'invalid_event', '1'),
    letter(notJson, 0, 'invalid_json', '2'),
  ];
  const night = demoNight(new Date('2026-11-22T10:00:00Z'));
  const noSettlements: SettlementsShown = { night, result: { file: null, lines: [] } };

  it('knows when everything arrived, counting a redelivered event once', () => {
    const duplicate = status(single, 0, 'payment.created', 'the-same-event');
    const outcomes = outcomesOf([
      ...everything,
      duplicate,
      letter(invalid, 0, 'invalid_event', '1'),
    ]);
    expect(outcomes).toHaveLength(7);
    expect(missingOutcomes(orders, outcomes)).toEqual([]);
    expect(failedOutcomes(orders, outcomes)).toEqual([]);
  });

  it('shows an extra status event without failing', () => {
    const extra = status(tradeIn, 1, 'payment.status_changed');
    const outcomes = outcomesOf([...everything, extra]);
    expect(failedOutcomes(orders, outcomes)).toEqual([]);
    const screen = renderScreen({
      orders,
      outcomes,
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
      settlements: noSettlements,
      placement,
      elapsedMs: 1234,
      style: styleFor(false),
    });
    const added = screen.findIndex((line) => line.includes('→ order.installment_added'));
    expect(screen[added + 1]).toContain('✗ dead letter');
    expect(screen[added + 2]).toContain('x-dlq-reason mapping_failed');
    expect(screen.filter((line) => line.includes('nothing came back'))).toHaveLength(5);
  });

  it('wraps long values at spaces', () => {
    expect(wrap('aaa bbb ccc', 7)).toEqual(['aaa bbb', 'ccc']);
    expect(wrap('averyveryverylongword x', 5)).toEqual(['averyveryverylongword', 'x']);
  });

  describe('nightly settlements', () => {
    const lines = [
      lineEvent(night, 2, ['1249.50', '18.74', '1230.76'], {
        settlementId: '6b02699d624d7f005f469792',
        paymentId: '6b02699d624d7f005f46979d',
        orderId: 'SO-10042',
      }),
      lineEvent(night, 3, ['101.07', '1.52', '99.55'], {
        settlementId: '6b02699d624d7f005f469794',
        paymentId: '6b02699d624d7f005f469795',
      }),
      lineEvent(night, 4, ['-102.14', '-1.53', '-100.61'], {
        settlementId: '6b02699d624d7f005f469796',
        paymentId: '6b02699d624d7f005f469797',
      }),
    ];

    it('books yesterday (UTC) in the sandbox: three rows and a row cut short', () => {
      expect(night.date).toBe('2026-11-21');
      expect(night.seed).toEqual({
        organizationId: 'org-1',
        date: '2026-11-21',
        count: 3,
        malformedLines: [expect.stringMatching(/^[0-9a-f]{24},2026-11-21,org-1,/)],
      });
      expect(night.seed.malformedLines?.[0]?.split(',')).toHaveLength(11);
      expect({ rows: night.rows, badRows: night.badRows }).toEqual({ rows: 3, badRows: 1 });
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
      ]);
      const all = nightResult(settlementsOf([...lines].reverse().concat(fileEvent(night))), night);
      expect(missingSettlements(night, all)).toEqual([]);
      expect(settlementProblems(night, all)).toEqual([]);
      expect(all.lines.map((line) => line.lineNumber)).toEqual([2, 3, 4]);
    });

    it('ignores other nights and topics, and fails a file whose rows do not add up', () => {
      const other = fileEvent(night, { dateFrom: '2026-11-20', dateTo: '2026-11-20' });
      expect(nightResult(settlementsOf([other, ...everything]), night).file).toBeNull();
      const short = nightResult(settlementsOf([fileEvent(night, { rows: 2, badRows: 2 })]), night);
      expect(settlementProblems(night, short)).toEqual([
        'settlement file org-1 2026-11-21 has 2 rows and 2 bad rows; the sandbox holds 3 and 1',
      ]);
    });

    it('shows the file, its bad row by line number and its lines, within 100 columns', () => {
      const result = nightResult(settlementsOf([...lines, fileEvent(night)]), night);
      const screen = renderScreen({
        orders,
        outcomes: outcomesOf(everything),
        settlements: { night, result },
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
        '  → sandbox             org-1 2026-11-21 (yesterday): 3 rows booked, and 1 row cut short',
        '  ← settlement.file_available  org-1 2026-11-21, format standard, version 1',
        '                        3 rows, 1 bad row, 703 bytes stored, sha256 b3ea5dafb1d2ea4c…',
        '                        ✗ line 5  has 11 field(s), the header needs 14',
        '  ← settlement.line ×3  settlement  payment    type       gross    fee      net',
        '    line 2              …5f469792   …5f46979d  payment  1249.50  18.74  1230.76 NOK  order SO-10042',
        '    line 3              …5f469794   …5f469795  payment   101.07   1.52    99.55 NOK  not ours',
        '    line 4              …5f469796   …5f469797  refund   -102.14  -1.53  -100.61 NOK  not ours',
      ]);
      expect(screen[end - 1]).toBe('');
      for (const line of section) expect(line.length).toBeLessThanOrEqual(100);
    });

    it('says what did not come', () => {
      const screen = renderScreen({
        orders,
        outcomes: outcomesOf(everything),
        settlements: noSettlements,
        placement,
        elapsedMs: 1,
        style: styleFor(true),
      });
      expect(screen).toContain(
        '  \u001b[31m… no settlement.file_available for org-1 2026-11-21\u001b[39m',
      );
      const partial = renderScreen({
        orders,
        outcomes: outcomesOf(everything),
        settlements: {
          night,
          result: nightResult(settlementsOf([lines[1]!, fileEvent(night)]), night),
        },
        placement,
        elapsedMs: 1,
        style: styleFor(false),
      });
      expect(partial).toContain('  … 1 of 3 settlement.lines came');
    });
  });
});
