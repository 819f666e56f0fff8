/**
 * A rolling upgrade with two versions live (issue 30 §2; docs/operations.md "Upgrading"):
 * the previous release's worker, built from the commit migrations/released.json records,
 * and this checkout's worker in one consumer group on real Kafka, with orders flowing.
 *
 * 1. A fresh database migrated by the previous release only (up to `lastReleased`).
 * 2. Its worker consumes a steady load of order lives (payment requests and follow-ups).
 * 3. This version's worker joins the group: it runs its migrations (those after
 *    `lastReleased`) while the old one keeps consuming; then both process events.
 * 4. The old one is stopped (SIGTERM, exit 0); the load goes on for the new one alone.
 * 5. Nothing lost, nothing doubled: one payment per order at the sandbox, one
 *    payment.created per order, no dead letter, nothing in doubt, an empty outbox.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import { sleep } from '../../src/timing/sleep.js';
import { until } from '../support/until.js';
import { DeployBed, errorsOf, processedBy } from './deploy-bed.js';
import {
  currentBuildMain,
  migrationName,
  migrationsAfter,
  previousReleaseMain,
  type ReleasedRecord,
} from './previous-release.js';

const EVENTS_PER_SECOND = 20;
/** How long both versions consume side by side before the old one is stopped. */
const OVERLAP_MS = 10_000;

describe('rolling upgrade: the previous release and this one in one consumer group', () => {
  let bed: DeployBed;
  let previousMain: string;
  let released: ReleasedRecord;
  let currentMain: string;
  let passed = false;
  const currentDir = join(tmpdir(), `payflow-bridge-current-upgrade-${process.pid}`);

  beforeAll(async () => {
    // Built first: a clone without the release's commit fails here, with the reason.
    ({ main: previousMain, released } = await previousReleaseMain());
    currentMain = await currentBuildMain(currentDir);
    bed = await DeployBed.start({ label: 'upgrade', emptyDatabase: true });
  }, 120_000);

  afterAll(async () => {
    await bed?.close(!passed);
    rmSync(currentDir, { recursive: true, force: true });
  }, 60_000);

  const ranMigrations = async (): Promise<string[]> =>
    (await bed.query<{ name: string }>('SELECT name FROM migrations ORDER BY id')).map((row) =>
      migrationName(row.name),
    );

  it('loses and doubles nothing while the new version migrates and joins, and the old one leaves', async () => {
    const started = Date.now();
    const newMigrations = migrationsAfter(released.lastReleased);
    // Right after a release ships there may be none yet: then only the code is rolled out.

    // 1-2. The previous release migrates the empty database and consumes.
    const old = await bed.startWorker(previousMain, 'previous');
    expect((await ranMigrations()).at(-1)).toBe(released.lastReleased);
    const load = bed.load('UP', EVENTS_PER_SECOND);
    await until(async () => (await processedBy(old)) >= 20, 60_000, 'the old worker processes');

    // 3. This version joins; its migrations run while the old one consumes.
    const oldBeforeJoin = await processedBy(old);
    const joinedAt = Date.now();
    const current = await bed.startWorker(currentMain, 'current');
    const joinSeconds = (Date.now() - joinedAt) / 1000;
    const oldDuringJoin = (await processedBy(old)) - oldBeforeJoin;
    expect(await ranMigrations()).toEqual(expect.arrayContaining(newMigrations));
    if (newMigrations.length > 0) {
      expect(readFileSync(bed.logFile('current'), 'utf8')).toContain('"msg":"database migrated"');
    }

    // Both work side by side: each takes events after the new one joined.
    const oldAtJoin = await processedBy(old);
    await until(
      async () => (await processedBy(current)) >= 10 && (await processedBy(old)) >= oldAtJoin + 10,
      60_000,
      'both workers process events after the new one joined',
    );
    expect(old.assigned.length).toBeGreaterThan(0);
    expect(current.assigned.length).toBeGreaterThan(0);
    expect(old.assigned.length + current.assigned.length).toBe(12);
    // … and keep working side by side, both ready, for a while.
    const sideBySide = [await processedBy(old), await processedBy(current)];
    await sleep(OVERLAP_MS);
    expect((await old.get('/health/ready')).status).toBe(200);
    expect((await current.get('/health/ready')).status).toBe(200);
    expect(await processedBy(old)).toBeGreaterThan(sideBySide[0] ?? 0);
    expect(await processedBy(current)).toBeGreaterThan(sideBySide[1] ?? 0);
    const oldTotal = await processedBy(old);

    // 4. The old one leaves; the load goes on for the new one alone.
    expect(await old.stop()).toBe(0);
    await until(
      () => current.assigned.length === 12,
      30_000,
      'the new worker takes every partition',
    );
    const currentAlone = await processedBy(current);
    await sleep(5_000);
    await load.stop();

    // 5. Everything settles, once.
    await bed.expectNothingLostOrDoubled(load.events);
    expect(await processedBy(current)).toBeGreaterThan(currentAlone);
    expect(current.alive).toBe(true);
    expect({ old: errorsOf(old), current: errorsOf(current) }).toEqual({ old: [], current: [] });
    expect(await current.stop()).toBe(0);
    process.stdout.write(
      `rolling upgrade (${newMigrations.join(', ') || 'no migration'}): ` +
        `${load.events.length} events of ${load.orders} orders; ` +
        `old processed ${oldTotal} (${oldDuringJoin} while the new one started and migrated ` +
        `in ${joinSeconds.toFixed(1)} s), new ${currentAlone} by the time the old one left; ` +
        `${Math.round((Date.now() - started) / 1000)} s\n`,
    );
    // The old one kept consuming while the new one started and ran its migrations.
    expect(oldDuringJoin).toBeGreaterThan(0);
    passed = true;
  }, 240_000);
});
