/**
 * The demo as `npm run demo` runs it after its install step: the project compiled (what
 * `npm run build` does, under the build lock the CLI test takes too), then
 * `node dist/demo/main.js` end to end: Kafka mock cluster, sandbox and worker processes
 * (the worker on HTTPS with the demo's certificate), the ERP's events, the payer's payments
 * in the sandbox and the status events their webhooks caused, the nightly settlement pull
 * (its cron every 2 s) with the paid orders in the file, its reconciliation (totals equal to
 * the sum of the lines, the one unknown_payment finding), the screen, and a clean stop; then
 * once more on real Apache Kafka (DEMO_KAFKA=real, a KRaft node of its own).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { formatMinorUnits, sumMinor, toMinorUnits } from '../../src/money/money.js';
import { buildCli } from '../cli/cli-test-kit.js';
import { TEST_DATABASE_SERVER } from '../support/database.js';

const ROOT = process.cwd();

interface DemoRun {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
  readonly ms: number;
  readonly startedAt: number;
}

/** Runs the compiled demo with a plain environment (not a terminal: no colours). */
function runDemo(timeoutMs: number, env: Record<string, string> = {}): Promise<DemoRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/demo/main.js')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DEMO_DATABASE_SERVER: TEST_DATABASE_SERVER, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    // Ctrl-C if it hangs: the demo then stops what it started.
    const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err, ms: Date.now() - started, startedAt: started });
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm run demo (compiled)', () => {
  beforeAll(async () => {
    await buildCli();
    expect(existsSync(join(ROOT, 'dist/demo/main.js'))).toBe(true);
  }, 180_000);

  it('plays the ERP, prints one screen of outcomes, stops everything and exits 0', async () => {
    const run = await runDemo(80_000);
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: '' });
    const out = run.out;

    // One screen, plain text (stdout is not a terminal).
    expect(out).not.toContain('\u001b[');
    // 60 lines before the reconciliation; its section adds 9 (a blank line, the heading,
    // totals, the finding, what to run next) and the night has one row fewer.
    expect(out.trimEnd().split('\n').length).toBeLessThanOrEqual(68);
    expect(out).toMatch(
      /^7 ERP events and 2 payments by the payer; back came \d+ status events and 2 dead letters in [\d.]+ s\.$/m,
    );

    // Every order's outcome, in the order the ERP sent its events.
    const links = [...out.matchAll(/link (https:\/\/\S+\/p\/([0-9a-f]{24}))\n/g)];
    expect(links).toHaveLength(3);
    expect(new Set(links.map((link) => link[2])).size).toBe(3);
    const [paidId, planId] = links.map((link) => link[2] ?? '');
    expect(out.match(/← payment\.created /g)).toHaveLength(3);
    expect(out).toMatch(/total 550940\.50 NOK = net 440752\.40 \+ VAT 110188\.10, one payment\n/);
    expect(out).toMatch(
      /installments 1: \d{4}-\d\d-01 6015\.18 · 2: \d{4}-\d\d-01 6015\.16 · 3: \d{4}-\d\d-01 6015\.16 NOK/,
    );
    expect(out).toMatch(/← installment\.added +extra-1: \d{4}-\d\d-01 1500\.00 NOK/);
    expect(out).toMatch(/← payment\.cancelled +status cancelled/);
    expect(out).toMatch(
      /SO-10045[^]*✗ dead letter[^]*x-dlq-reason invalid_event\n[^\n]*data\.currency/,
    );
    expect(out).toMatch(/SO-10046[^]*✗ dead letter[^]*x-dlq-reason invalid_json\n/);
    expect(out).not.toContain('nothing came back');
    expect(out).not.toContain('the payer did not get to pay');

    // The payer paid in the sandbox; its webhooks reached the worker over HTTPS (the sandbox
    // trusts the demo's certificate) and came back as status events of those orders.
    const single = out.slice(out.indexOf('SO-10042  '), out.indexOf('SO-10043  '));
    expect(single).toContain(
      '  → payer pays 550940.50 NOK in full; HTTPS webhooks: payment-update 200, status-update 200\n' +
        '  ← payment.status_changed  status paid (Payflow ',
    );
    expect(single).toMatch(
      /← payment\.status_changed {2}status paid \(Payflow [^)]*SUCCESS; from the webhook\)\n/,
    );
    const plan = out.slice(out.indexOf('SO-10043  '), out.indexOf('SO-10044  '));
    expect(plan).toMatch(
      /← installment\.added[^\n]*\n {2}→ payer pays installment 1, 6015\.18 NOK; HTTPS webhooks: payment-update 200, status-update 200\n/,
    );
    expect(plan).toMatch(/← installment\.status_changed ×\d+ {2}1: CREATED → (\S+ → )*PAID[ \n]/);

    // The nightly cron's first tick pulled yesterday's file (UTC): stored with its bad row,
    // and one settlement.line per row.
    expect(out).toContain(
      'Nightly settlements  cron every 2 s in this demo (*/2 * * * * * UTC); by default 02:30 Europe/Oslo\n',
    );
    const booked =
      /→ sandbox +org-1 (\S+) \(yesterday\): 1 row, 1 cut short; then 2 the payer paid\n/.exec(out);
    const yesterday = new Date(run.startedAt - 86_400_000).toISOString().slice(0, 10);
    expect(booked?.[1]).toBe(yesterday);
    expect(out).toContain(
      `← settlement.file_available  org-1 ${yesterday}, format standard, version 1\n`,
    );
    expect(out).toMatch(/ {24}3 rows, 1 bad row, \d+ bytes stored, sha256 [0-9a-f]{16}…\n/);
    expect(out).toMatch(/ {24}✗ line 5 {2}has 11 field\(s\), the header needs 14\n/);
    expect(out).toMatch(/← settlement\.line ×3 +payment +type +gross +fee +net\n/);
    const settled = [
      ...out.matchAll(
        /^ {4}line (\d) +…([0-9a-f]{8}) +payment +\d+\.\d\d +\d+\.\d\d +\d+\.\d\d NOK {2}(not ours|order \S+)$/gm,
      ),
    ].map((match) => [match[1], match[2], match[3]]);
    // The other payments, then the paid orders' money with their real Payflow ids and
    // their order ids (payflow-bridge knows the payments it created).
    expect(settled).toEqual([
      ['2', expect.stringMatching(/^[0-9a-f]{8}$/), 'not ours'],
      ['3', paidId?.slice(-8), 'order SO-10042'],
      ['4', planId?.slice(-8), 'order SO-10043'],
    ]);
    expect(out).toMatch(
      /^ {4}line 3 +…[0-9a-f]{8} +payment +550940\.50 +8264\.11 +542676\.39 NOK/m,
    );
    expect(out).toMatch(/^ {4}line 4 +…[0-9a-f]{8} +payment +6015\.18 +90\.23 +5924\.95 NOK/m);
    expect(out).not.toMatch(/^ {2}… /m);
    for (const line of out
      .slice(out.indexOf('Nightly settlements'), out.indexOf('Where it ran'))
      .split('\n')) {
      expect(line.length).toBeLessThanOrEqual(100);
    }

    // Then the worker reconciled the night: totals that are the exact sum of the three lines
    // (in minor units), the paid orders' two lines matched, and one finding, the unknown
    // payment of the row that is not ours; then what a person runs next.
    const lineAmounts = [
      ...out.matchAll(/^ {4}line \d +…[0-9a-f]{8} +payment +(\S+) +(\S+) +(\S+) NOK/gm),
    ].map((match) =>
      [match[1], match[2], match[3]].map((amount) => toMinorUnits(amount ?? '', 'NOK')),
    );
    expect(lineAmounts).toHaveLength(3);
    const sum = (column: number) =>
      formatMinorUnits(sumMinor(lineAmounts.map((amounts) => amounts[column] ?? 0)), 'NOK');
    const unknown = /finding 1: unknown_payment, payment ([0-9a-f]{24}), not ours\n/.exec(out);
    const unknownId = unknown?.[1] ?? '';
    expect(unknownId.slice(-8)).toBe(settled[0]?.[1]);
    const unknownGross = formatMinorUnits(lineAmounts[0]?.[0] ?? 0, 'NOK');
    const reconciliation = out.slice(out.indexOf('Reconciliation  '), out.indexOf('Where it ran'));
    expect(reconciliation).toBe(
      `Reconciliation  org-1 ${yesterday}, by the worker after the pull (docs/finance.md)\n` +
        '  ← settlement.reconciled  NOK: 3 lines, 2 matched, 1 finding\n' +
        `                        gross ${sum(0)}, fee ${sum(1)}, net ${sum(2)} NOK = the sum of its 3 lines\n` +
        `  ← settlement.exception  finding 1: unknown_payment, payment ${unknownId}, not ours\n` +
        `                        expected – (none due), settled ${unknownGross} NOK\n` +
        '  next                  npx payflow-bridge settlements reconcile --csv FILE (lines, totals)\n' +
        '                        npx payflow-bridge settlements acknowledge 1 --reason TEXT\n' +
        '                        /console/reconciliation (management port, with CONSOLE_TOKEN set)\n' +
        '\n',
    );

    // Where it ran, and how it stopped.
    expect(out).toMatch(/Kafka +librdkafka mock cluster, 3 brokers: 127\.0\.0\.1:\d+/);
    expect(out).toMatch(/Payflow +sandbox http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)/);
    expect(out).toMatch(/worker +node dist\/src\/main\.js, pid \d+, https:\/\/127\.0\.0\.1:\d+ /);
    expect(out).toContain('/payflow_bridge_demo');
    expect(out).toMatch(/Stopped the worker \(SIGTERM: exit code 0 after [\d.]+ s\), the sandbox/);
    expect(out).toMatch(/Worker log \(LOG_LEVEL=warn\): \/\S+worker\.log\n$/);

    // No process outlives the demo.
    const pids = [...out.matchAll(/pid (\d+)/g)].map((match) => Number(match[1]));
    expect(pids).toHaveLength(2);
    expect(pids.filter(alive)).toEqual([]);

    // The worker wrote to the demo database, and only there.
    const db = new pg.Client({ connectionString: `${TEST_DATABASE_SERVER}/payflow_bridge_demo` });
    await db.connect();
    try {
      const { rows } = await db.query<{ order_id: string; state: string; status: string }>(
        'SELECT order_id, state, status FROM payments ORDER BY order_id',
      );
      expect(rows).toEqual([
        { order_id: 'SO-10042', state: 'created', status: 'paid' },
        { order_id: 'SO-10043', state: 'created', status: 'pending' },
        { order_id: 'SO-10044', state: 'cancelled', status: 'cancelled' },
      ]);
      // The night's file, pulled by the cron: its bytes stored, the bad row included.
      const files = await db.query<Record<string, unknown>>(
        `SELECT f.organization_id, f.trigger, f.row_count, f.bad_row_count,
                f.size_bytes::int = (SELECT sum(octet_length(c.data))::int
                                       FROM settlement_file_chunks c WHERE c.file_id = f.id)
                  AS complete
           FROM settlement_files f`,
      );
      expect(files.rows).toEqual([
        {
          organization_id: 'org-1',
          trigger: 'cron',
          row_count: 3,
          bad_row_count: 1,
          complete: true,
        },
      ]);
      // The night's one finding, open (a person acknowledges it), on the row not ours.
      const findings = await db.query<Record<string, unknown>>(
        `SELECT kind, payflow_payment_id, order_id, closed_at FROM settlement_findings`,
      );
      expect(findings.rows).toEqual([
        { kind: 'unknown_payment', payflow_payment_id: unknownId, order_id: null, closed_at: null },
      ]);
    } finally {
      await db.end();
    }
    expect(run.ms).toBeLessThan(60_000);
  }, 90_000);

  it('runs the same loop on real Apache Kafka with DEMO_KAFKA=real', async () => {
    const run = await runDemo(80_000, { DEMO_KAFKA: 'real' });
    expect(run.err).not.toMatch(/demo: (failed|error)/i);
    expect(run.code).toBe(0);
    const { out } = run;
    expect(out).toMatch(
      /7 ERP events and 2 payments by the payer; back came \d+ status events and 2 dead letters in [\d.]+ s\./,
    );
    expect(out).toMatch(
      /← payment\.status_changed {2}status paid \(Payflow [^)]*; from the webhook\)\n/,
    );
    expect(out).toMatch(/← settlement\.line ×3 /);
    expect(out).toMatch(/← settlement\.reconciled {2}NOK: 3 lines, 2 matched, 1 finding\n/);
    expect(out).toMatch(/ NOK = the sum of its 3 lines\n/);
    expect(out).toMatch(
      /← settlement\.exception {2}finding 1: unknown_payment, payment [0-9a-f]{24}, not ours\n/,
    );
    expect(out).toMatch(/ NOK {2}order SO-10042\n[^\n]* NOK {2}order SO-10043\n/);
    expect(out).toMatch(/Kafka +Apache Kafka 3\.9\.1 \(KRaft\), 1 broker: 127\.0\.0\.1:\d+\n/);
    expect(out).toMatch(
      /Stopped the worker \(SIGTERM: exit code 0 after [\d.]+ s\), the sandbox, Apache Kafka\./,
    );
    const pids = [...out.matchAll(/pid (\d+)/g)].map((match) => Number(match[1]));
    expect(pids).toHaveLength(2);
    expect(pids.filter(alive)).toEqual([]);
  }, 90_000);
});
