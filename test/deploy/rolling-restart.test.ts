/**
 * A rolling restart under load (issue 30 §2): three replicas of this version in one
 * consumer group on real Kafka, a steady load of order lives, and each replica in turn
 * SIGTERMed (it drains and leaves the group: exit 0) and replaced by a new one, as a
 * Deployment's rolling update does. Nothing is left in doubt, nothing lost or doubled.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkerProcess } from '../../testbed/worker-process.js';
import { sleep } from '../../src/timing/sleep.js';
import { until } from '../support/until.js';
import { DeployBed, errorsOf, processedBy } from './deploy-bed.js';
import { currentBuildMain } from './previous-release.js';

const EVENTS_PER_SECOND = 20;
const REPLICAS = 3;

describe('rolling restart: SIGTERM one replica at a time under load', () => {
  let bed: DeployBed;
  let main: string;
  let passed = false;
  const buildDir = join(tmpdir(), `payflow-bridge-current-restart-${process.pid}`);

  beforeAll(async () => {
    main = await currentBuildMain(buildDir);
    bed = await DeployBed.start({ label: 'restart' });
  }, 120_000);

  afterAll(async () => {
    await bed?.close(!passed);
    rmSync(buildDir, { recursive: true, force: true });
  }, 60_000);

  it('replaces every replica in turn and leaves nothing in doubt', async () => {
    const started = Date.now();
    const replicas: WorkerProcess[] = [];
    for (let n = 1; n <= REPLICAS; n++) replicas.push(await bed.startWorker(main, `replica-${n}`));
    const load = bed.load('RR', EVENTS_PER_SECOND);
    await until(
      async () => (await Promise.all(replicas.map(processedBy))).every((count) => count > 0),
      60_000,
      'every replica processes events',
    );

    const exitCodes: (number | null)[] = [];
    const stopped: WorkerProcess[] = [];
    const replacements: WorkerProcess[] = [];
    const steps: string[] = [];
    for (let n = 1; n <= REPLICAS; n++) {
      const victim = replicas[n - 1] as WorkerProcess;
      const stepStarted = Date.now();
      exitCodes.push(await victim.stop());
      const stoppedIn = (Date.now() - stepStarted) / 1000;
      stopped.push(victim);
      const replacement = await bed.startWorker(main, `replica-${n}b`);
      replacements.push(replacement);
      steps.push(
        `replica ${n}: drained in ${stoppedIn.toFixed(1)} s, replaced in ` +
          `${((Date.now() - stepStarted) / 1000).toFixed(1)} s`,
      );
      // Under load a few seconds before the next one goes.
      await sleep(3_000);
    }
    await until(
      async () => (await Promise.all(replacements.map(processedBy))).every((count) => count > 0),
      60_000,
      'every replacement processes events',
    );
    await load.stop();

    await bed.expectNothingLostOrDoubled(load.events);
    expect(exitCodes).toEqual([0, 0, 0]);
    expect(replacements.every((worker) => worker.alive)).toBe(true);
    expect(replacements.reduce((sum, worker) => sum + worker.assigned.length, 0)).toBe(12);
    expect([...stopped, ...replacements].flatMap(errorsOf)).toEqual([]);
    const codes = await Promise.all(replacements.map((worker) => worker.stop()));
    expect(codes).toEqual([0, 0, 0]);
    process.stdout.write(
      `rolling restart: ${load.events.length} events of ${load.orders} orders; ` +
        `${steps.join('; ')}; ${Math.round((Date.now() - started) / 1000)} s\n`,
    );
    passed = true;
  }, 240_000);
});
