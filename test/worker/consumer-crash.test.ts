/**
 * A worker must not stay up without consuming. Here the real broker rejects the consumer's
 * group join with a non-retriable error (a session time-out below the broker's
 * group.min.session.timeout.ms, 6 s): kafkajs crashes for good while the worker is still
 * starting, before main.ts could register its crash handler. The crash is latched by the
 * transport: a listener registered afterwards still hears it, /health/live answers 503,
 * and the compiled entry point exits non-zero.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { buildCli } from '../cli/cli-test-kit.js';
import { startPipeline, workerEnvironment, type Pipeline } from '../support/pipeline.js';

/** Below the broker's group.min.session.timeout.ms: JoinGroup fails with INVALID_SESSION_TIMEOUT. */
const REJECTED_SESSION_TIMEOUT = '1s';

let pipeline: Pipeline;

beforeAll(async () => {
  pipeline = await startPipeline('consumer_crash', {
    KAFKA_SESSION_TIMEOUT: REJECTED_SESSION_TIMEOUT,
  });
}, 120_000);

afterAll(() => pipeline?.stop());

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms).unref(),
    ),
  ]);
}

describe('a consumer that crashes while the worker starts', () => {
  it('reaches a crash listener registered after start-up, and fails liveness', async () => {
    const worker = await pipeline.startWorker();
    // Registered only now, as main.ts does (after `await starting`).
    const crash = await within(
      new Promise<Error>((resolve) => worker.onCrash(resolve)),
      30_000,
      'the crash listener',
    );
    expect(crash.message).toMatch(/session timeout/i);

    const live = await fetch(`${worker.managementUrl}/health/live`);
    expect(live.status).toBe(503);
    expect(await live.json()).toMatchObject({ consumer: 'crashed' });
    await worker.shutdown();
  });

  it('makes the compiled worker exit non-zero', async () => {
    await buildCli();
    const { database, sandbox, topics, cluster } = pipeline;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      ...workerEnvironment({
        databaseUrl: database.url,
        brokers: cluster.bootstrapServers,
        groupId: `payflow-bridge-crash-${randomUUID().slice(0, 8)}`,
        topics,
        sandbox,
      }),
      KAFKA_SESSION_TIMEOUT: REJECTED_SESSION_TIMEOUT,
      LOG_LEVEL: 'info',
      SETTLEMENT_ENABLED: 'false',
    };
    const child = spawn(process.execPath, [join(process.cwd(), 'dist/src/main.js')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const code = await within(exited, 60_000, 'the worker process to exit');
      expect(code).not.toBe(0);
      expect(code).not.toBeNull();
      expect(out).toContain('order consumer crashed');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 180_000);
});
