/**
 * POST /sandbox/settlements (settlement rows and broken lines on chosen dates) and the
 * streamed settlement CSV of GET /partner/settlements/generate_csv.
 */
import { describe, expect, it } from '@jest/globals';
import { fetchToken, type SandboxHandle } from '../support/sandbox.js';
import {
  call,
  control,
  createPayment,
  type ErrorBody,
  type PaymentStatusBody,
  type ValidationBody,
} from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';

const HEADER =
  'settlement_id,settlement_date,organization_id,payment_id,payment_number,installment_id,internal_ref,order_number,transaction_type,currency,gross_amount,fee_amount,net_amount,booked_at';

/** Column positions of the standard settlement CSV. */
const COL = {
  date: 1,
  organization: 2,
  paymentId: 3,
  paymentNumber: 4,
  installmentId: 5,
  internalRef: 6,
  orderNumber: 7,
  type: 8,
  currency: 9,
  gross: 10,
  fee: 11,
  net: 12,
  bookedAt: 13,
} as const;

interface SeedAnswer {
  organizationId: string;
  date: string;
  booked: number;
  malformedLines: number;
}

describe('sandbox settlement seeding', () => {
  let sandbox: SandboxHandle;
  let token: string;

  useTestSandbox({
    started: (started) => {
      sandbox = started;
    },
    token: (fresh) => {
      token = fresh;
    },
  });

  const seed = (body: unknown) => control<SeedAnswer>(sandbox, 'POST', '/settlements', body);
  const csvUrl = (from: string, to: string) =>
    `${sandbox.partnerUrl}/settlements/generate_csv?from=${from}&to=${to}`;
  /** The CSV's lines without the empty one after the last CRLF. */
  const csv = async (from: string, to = from, bearer = token): Promise<string[]> => {
    const answer = await call('GET', csvUrl(from, to), { token: bearer });
    expect(answer.status).toBe(200);
    expect(answer.text.endsWith('\r\n')).toBe(true);
    const lines = answer.text.split('\r\n');
    expect(lines.pop()).toBe('');
    expect(lines[0]).toBe(HEADER);
    return lines;
  };
  const cells = (line: string | undefined) => (line ?? '').split(',');

  it('puts seeded rows on their past date, and only there', async () => {
    const answer = await seed({
      date: '2024-03-05',
      movements: [
        { grossAmount: '10.50', bookedAt: '2024-03-05T15:00:00.000Z' },
        { grossAmount: -12.3, internalRef: 'SO-7', bookedAt: '2024-03-05T09:30:00Z' },
        { grossAmount: 99, orderNumber: 'ORD-1', installmentId: 'inst-1' },
      ],
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({
      organizationId: 'org-1',
      date: '2024-03-05',
      booked: 3,
      malformedLines: 0,
    });

    const lines = await csv('2024-03-05');
    expect(lines).toHaveLength(4);
    const [early, noon, late] = lines.slice(1).map(cells);
    // ordered by booking time, not by the order they were sent in
    expect(early?.[COL.bookedAt]).toBe('2024-03-05T09:30:00.000Z');
    expect(noon?.[COL.bookedAt]).toBe('2024-03-05T12:00:00.000Z');
    expect(late?.[COL.bookedAt]).toBe('2024-03-05T15:00:00.000Z');
    expect(early?.slice(COL.date, COL.bookedAt)).toEqual([
      '2024-03-05',
      'org-1',
      early?.[COL.paymentId],
      early?.[COL.paymentNumber],
      '',
      'SO-7',
      `SB-${early?.[COL.paymentNumber]}`,
      'refund',
      'NOK',
      '-12.30',
      '-0.18',
      '-12.12',
    ]);
    expect(early?.[COL.paymentId]).toMatch(/^[0-9a-f]{24}$/);
    expect(noon?.slice(COL.installmentId, COL.fee)).toEqual([
      'inst-1',
      '',
      'ORD-1',
      'payment',
      'NOK',
      '99.00',
    ]);
    expect(late?.slice(COL.type, COL.bookedAt)).toEqual([
      'payment',
      'NOK',
      '10.50',
      '0.16',
      '10.34',
    ]);
    const numbers = [early, noon, late].map((row) => Number(row?.[COL.paymentNumber]));
    expect(new Set(numbers).size).toBe(3);

    expect(await csv('2024-03-04')).toEqual([HEADER]);
    expect(await csv('2024-03-06')).toEqual([HEADER]);
    expect(await csv('2024-03-01', '2024-03-31')).toEqual(lines);
  });

  it('sorts rows seeded out of order with the movements booked today', async () => {
    const payment = await createPayment(sandbox, token);
    await control(sandbox, 'POST', `/payments/${payment.id}/simulate`, { action: 'paid' });
    await seed({ date: '2024-03-06', movements: [{ grossAmount: 2 }] });
    await seed({ date: '2024-03-05', movements: [{ grossAmount: 1 }] });
    const today = (await control<{ now: string }>(sandbox, 'GET', '/clock')).body.now.slice(0, 10);
    const rows = (await csv('2024-01-01', today)).slice(1).map(cells);
    expect(rows.map((row) => row[COL.date])).toEqual(['2024-03-05', '2024-03-06', today]);
    expect(rows.map((row) => row[COL.gross])).toEqual(['1.00', '2.00', '1249.50']);
  });

  it('copies internal_ref, order_number, payment number and currency of an existing payment', async () => {
    const payment = await createPayment(sandbox, token, {
      currency: 'EUR',
      internalRef: 'SO-42',
      orderNumber: 'ORD-42',
    });
    const status = await call<PaymentStatusBody>(
      'GET',
      `${sandbox.url}/api/payments/${payment.id}/paymentStatus`,
      { token },
    );
    const answer = await seed({
      date: '2024-05-01',
      movements: [
        { paymentId: payment.id, grossAmount: 1249.5 },
        { paymentId: payment.id, grossAmount: '-100', internalRef: 'SO-OTHER' },
        // a payment the sandbox does not know: generated fields, one number for both rows
        { paymentId: 'feedfeedfeedfeedfeedfeed', grossAmount: 5 },
        { paymentId: 'feedfeedfeedfeedfeedfeed', grossAmount: 6 },
      ],
    });
    expect(answer.status).toBe(201);
    const rows = (await csv('2024-05-01')).slice(1).map(cells);
    expect(rows[0]?.slice(COL.paymentId, COL.fee)).toEqual([
      payment.id,
      String(status.body.paymentNumber),
      '',
      'SO-42',
      'ORD-42',
      'payment',
      'EUR',
      '1249.50',
    ]);
    expect(rows[1]?.slice(COL.internalRef, COL.fee)).toEqual([
      'SO-OTHER',
      'ORD-42',
      'refund',
      'EUR',
      '-100.00',
    ]);
    expect(rows[2]?.[COL.paymentId]).toBe('feedfeedfeedfeedfeedfeed');
    expect(rows[2]?.[COL.currency]).toBe('NOK');
    expect(rows[2]?.[COL.internalRef]).toBe('');
    expect(rows[3]?.[COL.paymentNumber]).toBe(rows[2]?.[COL.paymentNumber]);
    expect(rows[2]?.[COL.orderNumber]).toBe(`SB-${rows[2]?.[COL.paymentNumber]}`);
  });

  it('writes malformedLines verbatim after the rows of their date', async () => {
    const broken = ['garbage', '"unterminated,quote', 'a;b;c;;', '', 'x,y,z,"1,2"'];
    const first = await seed({
      date: '2024-06-01',
      movements: [{ grossAmount: 1 }, { grossAmount: 2, bookedAt: '2024-06-01T23:59:59.999Z' }],
      malformedLines: broken,
    });
    expect(first.body).toEqual({
      organizationId: 'org-1',
      date: '2024-06-01',
      booked: 2,
      malformedLines: 5,
    });
    await seed({ date: '2024-06-02', movements: [{ grossAmount: 3 }] });
    await seed({ date: '2024-06-03', malformedLines: ['only,broken'] });
    await seed({ date: '2024-06-01', malformedLines: ['appended'] });

    const lines = await csv('2024-06-01', '2024-06-03');
    expect(lines).toHaveLength(1 + 2 + broken.length + 1 + 1 + 1);
    expect(cells(lines[1])[COL.gross]).toBe('1.00');
    expect(cells(lines[2])[COL.gross]).toBe('2.00');
    expect(lines.slice(3, 3 + broken.length + 1)).toEqual([...broken, 'appended']);
    expect(cells(lines[9])[COL.gross]).toBe('3.00');
    expect(lines[10]).toBe('only,broken');

    expect((await csv('2024-06-03')).slice(1)).toEqual(['only,broken']);
    expect(await csv('2024-06-02')).toHaveLength(2);
  });

  it('streams a 100,000-row file (100,001 lines with the header)', async () => {
    const count = 100_000;
    const answer = await seed({ date: '2024-02-29', count });
    expect(answer.status).toBe(201);
    expect(answer.body.booked).toBe(count);

    const response = await fetch(csvUrl('2024-02-29', '2024-02-29'), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(
      'attachment; filename="settlements-org-1-2024-02-29-2024-02-29.csv"',
    );
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    // undici types the body as ReadableStream<any>; fetch bodies are bytes.
    const body = response.body as ReadableStream<Uint8Array> | null;
    if (body === null) throw new Error('no body');

    const decoder = new TextDecoder();
    let rest = '';
    let lineCount = 0;
    let chunks = 0;
    let refunds = 0;
    let previousBookedAt = '';
    let inOrder = true;
    const seen: string[][] = [];
    const take = (line: string) => {
      lineCount += 1;
      if (lineCount === 1) {
        expect(line).toBe(HEADER);
        return;
      }
      const row = cells(line);
      if (row.length !== 14 || row[COL.date] !== '2024-02-29') throw new Error(`bad row ${line}`);
      if (row[COL.type] === 'refund') refunds += 1;
      const bookedAt = row[COL.bookedAt] ?? '';
      if (bookedAt < previousBookedAt) inOrder = false;
      previousBookedAt = bookedAt;
      if (lineCount <= 11) seen.push(row);
    };
    const reader = body.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      chunks += 1;
      rest += decoder.decode(read.value, { stream: true });
      const parts = rest.split('\r\n');
      rest = parts.pop() ?? '';
      for (const line of parts) take(line);
    }
    rest += decoder.decode();
    expect(rest).toBe('');
    expect(lineCount).toBe(count + 1);
    expect(refunds).toBe(count / 10);
    expect(inOrder).toBe(true);
    expect(chunks).toBeGreaterThan(1);
    expect(seen[0]?.slice(COL.type, COL.bookedAt + 1)).toEqual([
      'payment',
      'NOK',
      '100.00',
      '1.50',
      '98.50',
      '2024-02-29T00:00:00.000Z',
    ]);
    // i = 9: 109 whole units and 63 hundredths, a refund
    expect(seen[9]?.slice(COL.type, COL.net + 1)).toEqual([
      'refund',
      'NOK',
      '-109.63',
      '-1.64',
      '-107.99',
    ]);
    expect(previousBookedAt.slice(0, 10)).toBe('2024-02-29');
  });

  it('seeds another organization in its currency; its rows stay out of org-1', async () => {
    await control(sandbox, 'POST', '/organizations', { id: 'org-2', currency: 'JPY' });
    await control(sandbox, 'POST', '/clients', {
      clientId: 'client-2',
      clientSecret: 'secret-2',
      scopes: ['organization:payflow:read'],
      organizationIds: ['org-2'],
    });
    const answer = await seed({ organizationId: 'org-2', date: '2024-07-01', count: 3 });
    expect(answer.body).toEqual({
      organizationId: 'org-2',
      date: '2024-07-01',
      booked: 3,
      malformedLines: 0,
    });
    const other = await fetchToken(sandbox, 'client-2', 'secret-2');
    const rows = (await csv('2024-07-01', '2024-07-01', other)).slice(1).map(cells);
    expect(rows.map((row) => [row[COL.organization], row[COL.currency], row[COL.gross]])).toEqual([
      ['org-2', 'JPY', '100'],
      ['org-2', 'JPY', '101'],
      ['org-2', 'JPY', '102'],
    ]);
    expect(rows.map((row) => row[COL.bookedAt])).toEqual([
      '2024-07-01T00:00:00.000Z',
      '2024-07-01T08:00:00.000Z',
      '2024-07-01T16:00:00.000Z',
    ]);
    expect(await csv('2024-07-01')).toEqual([HEADER]);
  });

  it('forgets seeded rows and lines on reset', async () => {
    await seed({ date: '2024-03-05', count: 5, malformedLines: ['broken'] });
    expect(await csv('2024-03-05')).toHaveLength(7);
    await control(sandbox, 'POST', '/reset');
    token = await fetchToken(sandbox);
    expect(await csv('2024-03-05')).toEqual([HEADER]);
  });

  it('refuses a bad body with 422 (400 for broken JSON) and books nothing', async () => {
    const loc = async (body: unknown) => {
      const answer = await control<ValidationBody>(sandbox, 'POST', '/settlements', body);
      expect(answer.status).toBe(422);
      return answer.body.detail.map((entry) => entry.loc);
    };
    expect(await loc({})).toEqual([['body', 'date']]);
    expect(await loc({ date: '2024-02-30' })).toEqual([['body', 'date']]);
    expect(await loc({ date: '05.03.2024' })).toEqual([['body', 'date']]);
    expect(await loc({ date: '2024-03-05', count: -1 })).toEqual([['body', 'count']]);
    expect(await loc({ date: '2024-03-05', count: 1.5 })).toEqual([['body', 'count']]);
    expect(await loc({ date: '2024-03-05', count: 1_000_001 })).toEqual([['body', 'count']]);
    expect(await loc({ date: '2024-03-05', malformedLines: [1] })).toEqual([
      ['body', 'malformedLines', 0],
    ]);
    expect(await loc({ date: '2024-03-05', movements: [{}] })).toEqual([
      ['body', 'movements', 0, 'grossAmount'],
    ]);
    expect(await loc({ date: '2024-03-05', movements: [{ grossAmount: 'ten' }] })).toEqual([
      ['body', 'movements', 0, 'grossAmount'],
    ]);
    expect(
      await loc({ date: '2024-03-05', movements: [{ grossAmount: 1, type: 'chargeback' }] }),
    ).toEqual([['body', 'movements', 0, 'type']]);
    expect(
      await loc({
        date: '2024-03-05',
        movements: [{ grossAmount: 1, bookedAt: '2024-03-06T00:00:00Z' }],
      }),
    ).toEqual([['body', 'movements', 0, 'bookedAt']]);
    // checked against the currency, and refunds are negative
    expect(
      await loc({
        date: '2024-03-05',
        count: 10,
        movements: [
          { grossAmount: 1 },
          { grossAmount: '1.234' },
          { grossAmount: 5, currency: 'JPY', type: 'payment' },
          { grossAmount: '1.5', currency: 'JPY' },
          { grossAmount: 3, type: 'refund' },
        ],
      }),
    ).toEqual([
      ['body', 'movements', 1, 'grossAmount'],
      ['body', 'movements', 3, 'grossAmount'],
      ['body', 'movements', 4, 'grossAmount'],
    ]);
    expect(await csv('2024-03-05')).toEqual([HEADER]);

    const broken = await call<ErrorBody>('POST', `${sandbox.controlUrl}/settlements`, {
      body: '{"date": ',
    });
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe('bad_request');
  });

  it('answers 404 for an unknown organization', async () => {
    const answer = await control<ErrorBody>(sandbox, 'POST', '/settlements', {
      organizationId: 'org-404',
      date: '2024-03-05',
      count: 1,
    });
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('not_found');
  });
});
