/**
 * Nightly settlements end to end: the worker as main.ts starts it, Postgres, real Kafka
 * and the sandbox over HTTP. A cron tick pulls and publishes; a re-pull is a
 * no-op and a changed file becomes a second version; missed nights are caught up oldest
 * first; a 5xx leaves the night missing until the next run; two workers racing make one
 * pull; malformed rows are reported by line and the file is still stored.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { openTestPool } from '../support/database.js';
import { NightlySettlementsRunner } from '../../src/settlements/nightly/nightly-settlements.runner.js';
import { PullSettlementHandler } from '../../src/settlements/pull/pull-settlement.handler.js';
import type { Worker } from '../../src/worker.js';
import { anEnvelope, anOrderId, isoDay, paymentRequestedData } from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import {
  filesOf,
  nightsOf,
  outboxCount,
  payflowCsv,
  runTimeOn,
  sandboxControl,
  seedSettlements,
  sha256,
  storedBytes,
  type SettlementEvent,
} from './settlements-kit.js';

const CSV_PATH = '/partner/settlements/generate_csv';

describe('nightly settlements', () => {
  let pipeline: Pipeline;
  let worker: Worker;
  let settlements: TopicReader;
  let status: TopicReader;
  let db: pg.Pool;
  let ourOrderId: string;
  let ourPaymentId: string;
  /** Yesterday (UTC): the night a cron tick today pulls. */
  const yesterday = isoDay(-1);
  const day = (offset: number): string => isoDay(offset - 1);

  const events = (): SettlementEvent[] => settlements.json<SettlementEvent>();
  const eventsOfFile = (fileId: string) => events().filter((event) => event.data.fileId === fileId);
  const pull = (date: string, target: Worker = worker) =>
    target.app
      .get(PullSettlementHandler)
      .execute({ organizationId: 'org-1', date, format: 'standard', trigger: 'cli' });
  const run = (date: string, target: Worker = worker) =>
    target.app.get(NightlySettlementsRunner).run(runTimeOn(date));

  beforeAll(async () => {
    pipeline = await startPipeline('settlements');
    db = openTestPool(pipeline.database.url, 3);
    worker = await pipeline.startWorker(
      {},
      { SETTLEMENT_ENABLED: false, SETTLEMENT_TIMEZONE: 'UTC' },
    );
    [settlements, status] = await Promise.all([
      TopicReader.start(pipeline.kafka, pipeline.topics.settlements),
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
    ]);
    ourOrderId = anOrderId();
    await pipeline.publish([
      {
        key: ourOrderId,
        value: anEnvelope('order.payment_requested', paymentRequestedData(), {
          orderId: ourOrderId,
        }),
      },
    ]);
    await status.waitFor((messages) => messages.some((message) => message.key === ourOrderId));
    const created = status.json<{ orderId: string; paymentId: string }>();
    ourPaymentId = created.find((event) => event.orderId === ourOrderId)!.paymentId;
  }, 120_000);

  afterAll(async () => {
    await settlements?.stop();
    await status?.stop();
    await db?.end();
    await pipeline?.stop();
  });

  it('a cron tick pulls yesterday, stores the file and publishes it with its lines', async () => {
    await seedSettlements(pipeline.sandbox, {
      date: yesterday,
      count: 3,
      movements: [{ paymentId: ourPaymentId, grossAmount: '1250.00' }],
    });
    const expected = await payflowCsv(pipeline.sandbox, yesterday);
    const cronWorker = await pipeline.startWorker(
      {},
      {
        SETTLEMENT_CRON: '* * * * * *',
        SETTLEMENT_TIMEZONE: 'UTC',
        KAFKA_GROUP_ID: `${pipeline.config.KAFKA_GROUP_ID}-cron`,
      },
    );
    try {
      await settlements.waitFor(() =>
        events().some((event) => event.type === 'settlement.file_available'),
      );
      const [file] = await filesOf(db, yesterday);
      expect(file).toMatchObject({ version: 1, trigger: 'cron', row_count: 4, bad_row_count: 0 });
      expect(file!.sha256).toBe(sha256(expected));
      expect(Number(file!.size_bytes)).toBe(expected.length);
      expect((await storedBytes(db, file!.id)).equals(expected)).toBe(true);
      expect(await nightsOf(db)).toEqual([
        { date: yesterday, status: 'pulled', attempts: 1, last_error: null, file_id: file!.id },
      ]);

      await settlements.waitFor(() => eventsOfFile(file!.id).length === 5);
      const published = eventsOfFile(file!.id);
      const announcement = published.find((event) => event.type === 'settlement.file_available')!;
      expect(announcement).toMatchObject({
        organizationId: 'org-1',
        data: {
          dateFrom: yesterday,
          dateTo: yesterday,
          format: 'standard',
          version: 1,
          replacesFileId: null,
          rows: 4,
          badRows: 0,
          sha256: sha256(expected),
        },
      });
      const lines = published.filter((event) => event.type === 'settlement.line');
      expect(lines).toHaveLength(4);
      const ours = lines.filter((event) => event.paymentId === ourPaymentId);
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatchObject({
        orderId: ourOrderId,
        data: { grossAmount: '1250.00', currency: 'NOK', internalRef: ourOrderId },
      });
      expect(lines.filter((event) => event.orderId === null)).toHaveLength(3);
      const keyed = settlements.messages.filter((message) =>
        lines.some((line) => message.value.includes(line.eventId)),
      );
      expect(keyed.map((message) => message.key).sort()).toEqual(
        lines.map((line) => line.paymentId).sort(),
      );

      // Later ticks (one a second) find nothing missing: no second file, no new events.
      const before = await outboxCount(db, pipeline.topics.settlements);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(await filesOf(db, yesterday)).toHaveLength(1);
      expect(await outboxCount(db, pipeline.topics.settlements)).toBe(before);

      const metrics = await (await fetch(`${cronWorker.managementUrl}/metrics`)).text();
      expect(metrics).toMatch(/^payflow_bridge_settlement_pulls_total\{outcome="stored"\} 1$/m);
      expect(metrics).toMatch(/^payflow_bridge_settlement_rows_total\{kind="parsed"\} 4$/m);
      expect(metrics).toMatch(/^payflow_bridge_settlement_nights_missing 0$/m);
      expect(metrics).not.toMatch(/^payflow_bridge_settlement_last_run_timestamp_seconds 0$/m);
    } finally {
      await cronWorker.shutdown();
    }
  });

  it('pulling the same night again stores nothing; a changed file is kept as a new version', async () => {
    const before = await outboxCount(db, pipeline.topics.settlements);
    const again = await pull(yesterday);
    expect(again.outcome).toBe('unchanged');
    expect(await filesOf(db, yesterday)).toHaveLength(1);
    expect(await outboxCount(db, pipeline.topics.settlements)).toBe(before);
    expect(await db.query('SELECT 1 FROM settlement_file_chunks')).toMatchObject({ rowCount: 1 });

    await seedSettlements(pipeline.sandbox, {
      date: yesterday,
      movements: [{ grossAmount: '-100.00', type: 'refund' }],
    });
    const changed = await pull(yesterday);
    expect(changed.outcome).toBe('changed');
    const files = await filesOf(db, yesterday);
    expect(files.map((file) => [file.version, file.row_count, file.trigger])).toEqual([
      [1, 4, 'cron'],
      [2, 5, 'cli'],
    ]);
    expect(files[1]!.previous_file_id).toBe(files[0]!.id);
    expect(files[1]!.sha256).toBe(sha256(await payflowCsv(pipeline.sandbox, yesterday)));
    expect((await nightsOf(db))[0]).toMatchObject({ status: 'pulled', file_id: files[1]!.id });
    await settlements.waitFor(() => eventsOfFile(files[1]!.id).length === 6);
    expect(
      eventsOfFile(files[1]!.id).find((event) => event.type === 'settlement.file_available'),
    ).toMatchObject({ data: { version: 2, replacesFileId: files[0]!.id, rows: 5 } });
  });

  it('catches up missed nights oldest first', async () => {
    await seedSettlements(pipeline.sandbox, { date: day(1), count: 2 });
    await seedSettlements(pipeline.sandbox, { date: day(3), count: 1 });
    // The worker was down for three nights: the run on day 4 pulls days 1, 2 and 3.
    const result = await run(day(4));
    expect(result).toMatchObject({ ran: true, night: day(3), failed: [], stillMissing: 0 });
    expect(result.pulled.map((night) => [night.date, night.result.outcome])).toEqual([
      [day(1), 'stored'],
      [day(2), 'stored'],
      [day(3), 'stored'],
    ]);
    const { rows } = await db.query<{ date: string; row_count: number }>(
      `SELECT to_char(date_from, 'YYYY-MM-DD') AS date, row_count FROM settlement_files
        WHERE date_from > $1::date ORDER BY pulled_at, date_from`,
      [yesterday],
    );
    expect(rows).toEqual([
      { date: day(1), row_count: 2 },
      { date: day(2), row_count: 0 },
      { date: day(3), row_count: 1 },
    ]);
    expect((await nightsOf(db)).map((night) => [night.date, night.status])).toEqual([
      [yesterday, 'pulled'],
      [day(1), 'pulled'],
      [day(2), 'pulled'],
      [day(3), 'pulled'],
    ]);
    // A run that finds nothing missing does nothing.
    expect(await run(day(4))).toMatchObject({ ran: true, pulled: [], stillMissing: 0 });
  });

  it('a 5xx leaves the night missing, and the next run pulls it', async () => {
    await seedSettlements(pipeline.sandbox, { date: day(5), count: 2 });
    await sandboxControl(pipeline.sandbox, 'POST', '/faults', {
      method: 'GET',
      path: CSV_PATH,
      status: 503,
    });
    try {
      const failed = await run(day(6));
      expect(failed.pulled).toEqual([]);
      // Days 4 and 5 are owed; 4 fails with a 503 and holds back 5 (dates stay in order).
      expect(failed.failed).toEqual([
        expect.objectContaining({
          date: day(4),
          transient: true,
          error: expect.stringContaining('503'),
        }),
      ]);
      expect(failed.stillMissing).toBe(2);
      const nights = (await nightsOf(db)).slice(-2);
      expect(nights).toEqual([
        expect.objectContaining({ date: day(4), status: 'missing', attempts: 1, file_id: null }),
        expect.objectContaining({ date: day(5), status: 'missing', attempts: 0 }),
      ]);
      expect(nights[0]!.last_error).toContain('503');
      expect(await filesOf(db, day(4))).toEqual([]);
    } finally {
      await sandboxControl(pipeline.sandbox, 'DELETE', '/faults');
    }
    const next = await run(day(6));
    expect(next.pulled.map((night) => [night.date, night.result.outcome])).toEqual([
      [day(4), 'stored'],
      [day(5), 'stored'],
    ]);
    expect((await nightsOf(db)).slice(-2)).toEqual([
      expect.objectContaining({ date: day(4), status: 'pulled', attempts: 2, last_error: null }),
      expect.objectContaining({ date: day(5), status: 'pulled', attempts: 1 }),
    ]);
    expect((await filesOf(db, day(5)))[0]).toMatchObject({ row_count: 2 });
  });

  it('two workers racing make one pull', async () => {
    const second = await pipeline.startWorker(
      {},
      {
        SETTLEMENT_ENABLED: false,
        SETTLEMENT_TIMEZONE: 'UTC',
        KAFKA_GROUP_ID: `${pipeline.config.KAFKA_GROUP_ID}-second`,
      },
    );
    try {
      await seedSettlements(pipeline.sandbox, { date: day(6), count: 2 });
      // Slow downloads keep the first run inside its lock while the other one tries.
      await sandboxControl(pipeline.sandbox, 'POST', '/faults', {
        method: 'GET',
        path: CSV_PATH,
        latencyMs: 800,
      });
      const results = await Promise.all([run(day(7)), run(day(7), second)]);
      expect(results.map((result) => result.ran).sort()).toEqual([false, true]);
      expect(results.find((result) => result.ran)!.pulled).toHaveLength(1);
      expect(await filesOf(db, day(6))).toHaveLength(1);

      // A pull by hand of the same night from both at once: one stores, the other finds
      // the same content and stores nothing.
      await seedSettlements(pipeline.sandbox, { date: day(9), count: 1 });
      const pulls = await Promise.all([pull(day(9)), pull(day(9), second)]);
      expect(pulls.map((result) => result.outcome).sort()).toEqual(['stored', 'unchanged']);
      expect(await filesOf(db, day(9))).toHaveLength(1);
    } finally {
      await sandboxControl(pipeline.sandbox, 'DELETE', '/faults');
      await second.shutdown();
    }
  });

  it('reports malformed rows by line and still stores and publishes the file', async () => {
    await seedSettlements(pipeline.sandbox, {
      date: day(10),
      count: 2,
      malformedLines: ['this is not a settlement row', 'st-x,not-a-date'],
    });
    const result = await pull(day(10));
    expect(result.outcome).toBe('stored');
    expect(result.file).toMatchObject({ rows: 2, badRows: 2 });
    const [file] = await filesOf(db, day(10));
    expect(file).toMatchObject({ row_count: 2, bad_row_count: 2 });
    expect(
      (await storedBytes(db, file!.id)).equals(await payflowCsv(pipeline.sandbox, day(10))),
    ).toBe(true);
    const { rows: errors } = await db.query<{ line_number: number; message: string }>(
      'SELECT line_number, message FROM settlement_file_errors WHERE file_id = $1 ORDER BY line_number',
      [file!.id],
    );
    expect(errors.map((error) => error.line_number)).toEqual([4, 5]);
    expect(errors[0]!.message).toMatch(/field\(s\)/);
    await settlements.waitFor(() => eventsOfFile(file!.id).length === 3);
    expect(
      eventsOfFile(file!.id).find((event) => event.type === 'settlement.file_available'),
    ).toMatchObject({
      data: {
        rows: 2,
        badRows: 2,
        badRowSamples: [
          { lineNumber: 4, error: expect.any(String) },
          { lineNumber: 5, error: expect.any(String) },
        ],
      },
    });
  });
  it('a pull by hand before the first nightly run does not make the run invent history', async () => {
    // A second organization the credentials reach, which no nightly run has seen yet.
    await sandboxControl(pipeline.sandbox, 'POST', '/organizations', { id: 'org-2' });
    const { scopes } = await sandboxControl<{ scopes: string[] }>(
      pipeline.sandbox,
      'POST',
      '/clients',
      {
        clientId: 'sandbox-client',
        clientSecret: 'sandbox-secret',
        scopes: [
          'organization:payflow:create',
          'organization:payflow:update',
          'organization:payflow:read',
        ],
        organizationIds: ['org-1', 'org-2'],
      },
    );
    expect(scopes).toContain('organization:payflow:read');
    await seedSettlements(pipeline.sandbox, { organizationId: 'org-2', date: day(-20), count: 1 });
    const byHand = await worker.app
      .get(PullSettlementHandler)
      .execute({ organizationId: 'org-2', date: day(-20), format: 'standard', trigger: 'cli' });
    expect(byHand.outcome).toBe('stored');

    const result = await run(day(12));
    // org-1 catches up what it owes since its last run (days 7, 8 and 11; 9 and 10 were
    // pulled by hand); org-2 starts at yesterday, not at the month-old night pulled by hand.
    expect(result.pulled.map((night) => `${night.organizationId} ${night.date}`)).toEqual([
      `org-1 ${day(7)}`,
      `org-1 ${day(8)}`,
      `org-1 ${day(11)}`,
      `org-2 ${day(11)}`,
    ]);
    expect((await nightsOf(db, 'org-2')).map((night) => [night.date, night.status])).toEqual([
      [day(-20), 'pulled'],
      [day(11), 'pulled'],
    ]);
  });

  it('a 4xx does not hold back the later nights; the night stays missing and is retried', async () => {
    await sandboxControl(pipeline.sandbox, 'POST', '/faults', {
      method: 'GET',
      path: CSV_PATH,
      status: 400,
      times: 1,
    });
    const result = await run(day(14));
    expect(result.failed).toEqual([
      expect.objectContaining({ organizationId: 'org-1', date: day(12), transient: false }),
    ]);
    expect(result.pulled.map((night) => `${night.organizationId} ${night.date}`)).toEqual([
      `org-1 ${day(13)}`,
      `org-2 ${day(12)}`,
      `org-2 ${day(13)}`,
    ]);
    expect(result.stillMissing).toBe(1);
    const retried = await run(day(14));
    expect(retried).toMatchObject({ failed: [], stillMissing: 0 });
    expect(retried.pulled.map((night) => `${night.organizationId} ${night.date}`)).toEqual([
      `org-1 ${day(12)}`,
    ]);
  });

  it('a pull cut off mid-file (its connection dies) stores nothing, and the next run pulls it whole', async () => {
    const night = day(20);
    await seedSettlements(pipeline.sandbox, { date: night, count: 60_000 });
    const outboxBefore = await outboxCount(db, pipeline.topics.settlements);
    const pulling = pull(night).then(
      () => 'pulled',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    // Wait until the pull holds its night lock and has been streaming for a moment, then
    // kill its database session, as a crash of the worker would.
    const lockHolder = async (): Promise<number | null> => {
      const { rows } = await db.query<{ pid: number }>(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [0x73746c02],
      );
      return rows[0]?.pid ?? null;
    };
    let pid: number | null = null;
    for (let i = 0; i < 200 && pid === null; i += 1) {
      pid = await lockHolder();
      if (pid === null) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(pid).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await db.query('SELECT pg_terminate_backend($1)', [pid]);
    expect(await pulling).toMatch(/not pulled/);

    expect(await filesOf(db, night)).toEqual([]);
    const { rows: chunks } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM settlement_file_chunks c
        WHERE NOT EXISTS (SELECT 1 FROM settlement_files f WHERE f.id = c.file_id)`,
    );
    expect(chunks[0]!.n).toBe(0);
    expect(await outboxCount(db, pipeline.topics.settlements)).toBe(outboxBefore);
    expect((await nightsOf(db)).find((row) => row.date === night)).toMatchObject({
      status: 'missing',
      attempts: 1,
    });

    const result = await run(day(21));
    expect(result.pulled.map((pulled) => [pulled.date, pulled.result.outcome])).toContainEqual([
      night,
      'stored',
    ]);
    expect((await filesOf(db, night))[0]).toMatchObject({ row_count: 60_000, bad_row_count: 0 });
    expect(await outboxCount(db, pipeline.topics.settlements)).toBeGreaterThanOrEqual(
      outboxBefore + 60_001,
    );
    // The stored night is also reconciled: 60,000 payments the bridge never created, each
    // an unknown_payment finding published once; hence the longer time-out (about 45 s
    // alone, over 120 s beside the rest of the suite on 2 cores).
  }, 240_000);
});
