/**
 * `payflow-bridge reconcile` through the compiled binary, against a real database and the
 * sandbox over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { openTestPool, createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  SANDBOX_CLIENT_ID,
  SANDBOX_CLIENT_SECRET,
  startTestSandbox,
  type SandboxHandle,
} from '../support/sandbox.js';
import { startPipeline, statusEvents, type Pipeline } from '../orders/support/pipeline.js';
import { createPayment, simulate } from '../reconciliation/status-sync-kit.js';
import { buildCli, runBinary, type BinaryResult } from './cli-test-kit.js';

let testDb: TestDatabase;
let sandbox: SandboxHandle;
let pipeline: Pipeline;
let db: pg.Pool;

beforeAll(async () => {
  [testDb, sandbox] = await Promise.all([
    createTestDatabase('cli_reconcile'),
    startTestSandbox(),
    buildCli(),
  ]).then(([database, handle]) => [database, handle] as const);
  db = openTestPool(testDb.url, 2);
  pipeline = await startPipeline(testDb, sandbox);
}, 180_000);

afterAll(async () => {
  await pipeline?.close();
  await db?.end();
  await sandbox?.close();
  await testDb?.drop();
});

function run(env: Record<string, string> = {}): Promise<BinaryResult> {
  return runBinary(['reconcile'], {
    DATABASE_URL: testDb.url,
    PAYFLOW_BASE_URL: sandbox.url,
    PAYFLOW_PARTNER_BASE_URL: sandbox.partnerUrl,
    PAYFLOW_CLIENT_ID: SANDBOX_CLIENT_ID,
    PAYFLOW_CLIENT_SECRET: SANDBOX_CLIENT_SECRET,
    ...env,
  });
}

describe('payflow-bridge reconcile', () => {
  it('prints what changed and a summary, and writes the events', async () => {
    const payment = await createPayment(pipeline, db, sandbox);
    await simulate(sandbox, payment.payflowId, 'opened');

    const first = await run();
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect(first.out).toContain(
      `order ${payment.orderId}  payment ${payment.payflowId}  (none) -> OPENED (pending)`,
    );
    expect(first.out).toMatch(
      /Reconciled 1 open payment\(s\) in \d+ ms: 1 changed, 0 unchanged, 0 failed, 1 event\(s\)/,
    );
    const events = await statusEvents(db, payment.orderId);
    expect(events.at(-1)).toMatchObject({
      type: 'payment.status_changed',
      data: { providerStatus: 'OPENED', source: 'poll' },
    });

    const second = await run();
    expect(second.code).toBe(0);
    expect(second.out).toMatch(/1 open payment\(s\) in \d+ ms: 0 changed, 1 unchanged/);
  });

  it('needs the PAYFLOW_* variables (exit 1, one line naming the variable)', async () => {
    const result = await run({ PAYFLOW_CLIENT_SECRET: '' });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^payflow-bridge: .*PAYFLOW_CLIENT_SECRET.*\n$/);
    expect(result.out).toBe('');
  });

  it('is a usage error with an extra argument (exit 2)', async () => {
    const result = await runBinary(['reconcile', 'now'], { DATABASE_URL: testDb.url });
    expect(result.code).toBe(2);
  });
});
