/**
 * `payflow-bridge settlements pull` and `settlements status` through the compiled binary,
 * against a real database, the sandbox over HTTP and real Kafka (a settlements topic of
 * this file: the command publishes what it stored through the outbox).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { isoDay } from '../support/builders.js';
import { addDays } from '../../src/timing/calendar.js';
import { openTestPool, createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  createTopics,
  deleteTopics,
  testKafkaCluster,
  topicSetFor,
} from '../support/kafka-test-bed.js';
import { TopicReader } from '../support/pipeline.js';
import {
  SANDBOX_CLIENT_ID,
  SANDBOX_CLIENT_SECRET,
  startTestSandbox,
  type SandboxHandle,
} from '../support/sandbox.js';
import {
  filesOf,
  nightsOf,
  sandboxControl,
  seedSettlements,
  type SettlementEvent,
} from '../settlements/settlements-kit.js';
import { buildCli, runBinary, type BinaryResult } from './cli-test-kit.js';

const { settlements: TOPIC } = topicSetFor('cli-settlements');
const cluster = testKafkaCluster(1);

let testDb: TestDatabase;
let sandbox: SandboxHandle;
let reader: TopicReader;
let db: pg.Pool;

beforeAll(async () => {
  [testDb, sandbox] = await Promise.all([
    createTestDatabase('cli_settlements'),
    startTestSandbox(),
    createTopics(cluster, [TOPIC], 3),
    buildCli(),
  ]).then(([database, handle]) => [database, handle] as const);
  db = openTestPool(testDb.url, 2);
  const kafka = new Kafka({
    clientId: 'cli-settlements',
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
  });
  reader = await TopicReader.start(kafka, TOPIC);
}, 180_000);

afterAll(async () => {
  await reader?.stop();
  await db?.end();
  await sandbox?.close();
  await testDb?.drop();
  await deleteTopics(cluster, [TOPIC]);
});

function settlements(args: string[], env: Record<string, string> = {}): Promise<BinaryResult> {
  return runBinary(['settlements', ...args], {
    DATABASE_URL: testDb.url,
    KAFKA_BROKERS: cluster.bootstrapServers,
    TOPIC_SETTLEMENTS: TOPIC,
    PAYFLOW_BASE_URL: sandbox.url,
    PAYFLOW_PARTNER_BASE_URL: sandbox.partnerUrl,
    PAYFLOW_CLIENT_ID: SANDBOX_CLIENT_ID,
    PAYFLOW_CLIENT_SECRET: SANDBOX_CLIENT_SECRET,
    SETTLEMENT_TIMEZONE: 'UTC',
    ...env,
  });
}

describe('payflow-bridge settlements pull', () => {
  const first = isoDay(-5);
  const last = isoDay(-3);

  it('pulls every night of the range, prints each, publishes, and a second run stores nothing', async () => {
    await seedSettlements(sandbox, { date: first, count: 3 });
    await seedSettlements(sandbox, { date: last, count: 1, malformedLines: ['garbage'] });

    const pulled = await settlements(['pull', '--from', first, '--to', last]);
    expect(pulled.code).toBe(0);
    // Not a terminal: progress comes as plain lines on stderr.
    expect(pulled.err).toContain('pulling 3 night(s)');
    expect(pulled.err).toContain(`org-1 ${last}: stored (3/3)`);
    const lines = pulled.out.split('\n');
    expect(lines.find((line) => line.includes(first))).toMatch(
      new RegExp(
        `^org-1  ${first}  standard  stored +v1  3 row\\(s\\), 0 of our orders  sha256 [0-9a-f]{12}  file [0-9a-f-]{36}$`,
      ),
    );
    expect(lines.find((line) => line.includes(addDays(first, 1)))).toContain(
      'stored     v1  0 row(s)',
    );
    expect(pulled.out).toContain(`Rows that did not parse in org-1 ${last}`);
    expect(pulled.out).toContain('  line 3: has 1 field(s), the header needs 14');
    expect(pulled.out).toContain(
      `Pulled 3 night(s): 3 stored, 0 changed (both versions kept), 0 unchanged, 0 failed; 7 event(s) for ${TOPIC}.`,
    );
    // The 7 lines and files, and their reconciliation: the 4 lines are payments the bridge
    // never created (4 settlement.exception) and 2 nights have lines (2 settlement.reconciled).
    expect(pulled.out).toContain('Published 13 event(s).');
    await reader.waitFor((messages) => messages.length >= 13);
    const events = reader.json<SettlementEvent>();
    expect(events.filter((event) => event.type === 'settlement.file_available')).toHaveLength(3);
    expect(events.filter((event) => event.type === 'settlement.line')).toHaveLength(4);
    expect((await filesOf(db, first))[0]).toMatchObject({ trigger: 'cli', row_count: 3 });

    const again = await settlements(['pull', '--from', first, '--to', last, '--org', 'org-1']);
    expect(again.code).toBe(0);
    expect(again.out).toContain('3 unchanged');
    expect(again.out).not.toContain('Published');
    expect(await filesOf(db, first)).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(reader.messages).toHaveLength(13);
  });

  it('says when a file changed, and keeps both versions', async () => {
    await seedSettlements(sandbox, { date: first, movements: [{ grossAmount: '10.00' }] });
    const result = await settlements(['pull', '--from', first, '--to', first]);
    expect(result.code).toBe(0);
    const [v1, v2] = await filesOf(db, first);
    expect(result.out).toContain(`CHANGED    v2  4 row(s)`);
    expect(result.out).toContain(`(kept beside v1 ${v1!.id})`);
    expect(v2).toMatchObject({ version: 2, previous_file_id: v1!.id });
  });

  it('fails with exit code 1 and marks the night missing when Payflow fails', async () => {
    const night = isoDay(-8);
    await sandboxControl(sandbox, 'POST', '/faults', {
      method: 'GET',
      path: '/partner/settlements/generate_csv',
      status: 500,
    });
    try {
      const result = await settlements(['pull', '--from', night, '--to', night]);
      expect(result.code).toBe(1);
      expect(result.out).toMatch(new RegExp(`org-1  ${night}  standard  FAILED .*500`));
      expect(result.err).toContain('1 night(s) not pulled; they are marked missing');
    } finally {
      await sandboxControl(sandbox, 'DELETE', '/faults');
    }
    expect((await nightsOf(db)).find((row) => row.date === night)).toMatchObject({
      status: 'missing',
      attempts: 1,
    });
    const status = await settlements(['status', '--from', night, '--to', last, '--missing']);
    expect(status.code).toBe(0);
    expect(status.out).toMatch(
      new RegExp(`org-1  ${night}  standard  missing  attempts 1  last error: .*500`),
    );
    expect(status.out).toContain('1 night(s): 0 pulled, 1 missing.');
  });

  it('--recheck N asks again for the last N nights and finds a file Payflow changed', async () => {
    await seedSettlements(sandbox, { date: last, movements: [{ grossAmount: '20.00' }] });
    const result = await settlements(['pull', '--recheck', '3', '--org', 'org-1']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(new RegExp(`org-1  ${last}  standard  CHANGED +v2`));
    expect(result.out).toContain('Pulled 3 night(s)');
    const mixed = await settlements(['pull', '--recheck', '3', '--from', first]);
    expect(mixed.code).toBe(2);
    expect(mixed.err).toContain('--recheck takes the place of --from and --to');
  });

  it('forget gives up a missing night, idempotently, and says what it did', async () => {
    const night = isoDay(-8);
    const forgot = await settlements(['forget', '--night', night, '--org', 'org-1']);
    expect(forgot.code).toBe(0);
    expect(forgot.out).toContain(
      `org-1  ${night}  standard  forgotten (was missing after 1 attempt(s)`,
    );
    expect(forgot.out).toContain('Forgot 1 night(s)');
    const again = await settlements(['forget', '--night', night]);
    expect(again.code).toBe(0);
    expect(again.out).toContain(`org-1  ${night}  standard  already forgotten`);
    expect(again.out).toContain('Forgot 0 night(s)');
    expect((await nightsOf(db)).find((row) => row.date === night)).toMatchObject({
      status: 'forgotten',
    });
    const none = await settlements(['forget', '--night', isoDay(-200)]);
    expect(none.out).toContain('nothing to forget');
  });

  it('refuses bad ranges with a usage error (exit code 2) before touching anything', async () => {
    const cases: [string[], string][] = [
      [['pull', '--to', last], 'settlements pull needs --from and --to'],
      [['pull', '--from', '2026-02-30', '--to', last], '--from must be a date written YYYY-MM-DD'],
      [['pull', '--from', last, '--to', first], '--from must not be after --to'],
      [['pull', '--from', first, '--to', isoDay(0)], `--to ${isoDay(0)} is not over yet`],
      [['pull', '--from', first, '--to', isoDay(2)], 'the newest complete night is'],
      [['pull', '--from', '2020-01-01', '--to', first], 'at most 366 days'],
      [
        ['pull', '--from', first, '--to', last, '--format', 'fancy'],
        '--format must be one of standard',
      ],
    ];
    for (const [args, message] of cases) {
      const result = await settlements(args, {
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(result.code).toBe(2);
      expect(result.err).toContain(message);
    }
  });
});
