/**
 * TLS on the management port (issue 27, part 3; CONTRACT §10), on a real worker started as
 * main.ts starts it:
 *
 * - with MANAGEMENT_TLS_CERT_FILE and MANAGEMENT_TLS_KEY_FILE (a self-signed certificate
 *   made here) it answers /health/live and /metrics over https, verified against that
 *   certificate, and a plain-HTTP request gets no answer from the application; the console
 *   may then be bound to every address;
 * - the built worker (`node dist/src/main.js`) refuses to start, exit 1 and one line, when
 *   the console would serve plain HTTP on an address that is not loopback, or when a
 *   Payflow URL or SASL PLAIN would cross the network in clear;
 * - a certificate file that cannot be read, or files that are not a certificate and its key,
 *   stop start-up with one line naming the variables.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import type { Worker } from '../../src/worker.js';
import { buildCli } from '../cli/cli-test-kit.js';
import { runCompiled } from '../support/compiled.js';
import { topicSetFor } from '../support/kafka-test-bed.js';
import { startPipeline, workerEnvironment, type Pipeline } from '../support/pipeline.js';
import { selfSignedTls, type TlsFixture } from '../support/tls.js';

jest.setTimeout(120_000);

const CONSOLE_TOKEN = 'management-tls-console-token';

let tls: TlsFixture;
let certDir: string;
let pipeline: Pipeline;
let worker: Worker;
let agent: Agent;

beforeAll(async () => {
  tls = await selfSignedTls();
  certDir = mkdtempSync(join(tmpdir(), 'pfb-management-tls-'));
  writeFileSync(join(certDir, 'cert.pem'), tls.cert);
  writeFileSync(join(certDir, 'key.pem'), tls.key, { mode: 0o600 });
  const [started] = await Promise.all([
    startPipeline('management_tls', {
      MANAGEMENT_TLS_CERT_FILE: join(certDir, 'cert.pem'),
      MANAGEMENT_TLS_KEY_FILE: join(certDir, 'key.pem'),
      // Over its own TLS, the console may listen on every address.
      MANAGEMENT_HOST: '0.0.0.0',
      CONSOLE_TOKEN,
    }),
    buildCli(),
  ]);
  pipeline = started;
  worker = await pipeline.startWorker();
  agent = new Agent({ connect: { ca: tls.ca }, connections: 2 });
}, 240_000);

afterAll(async () => {
  await agent?.close();
  await pipeline?.stop();
  if (certDir !== undefined) rmSync(certDir, { recursive: true, force: true });
});

describe('the management port over TLS', () => {
  it('answers health and metrics over https, its certificate verified', async () => {
    expect(worker.managementUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const live = await request(`${worker.managementUrl}/health/live`, { dispatcher: agent });
    expect(live.statusCode).toBe(200);
    await live.body.dump();
    const metrics = await request(`${worker.managementUrl}/metrics`, { dispatcher: agent });
    expect(metrics.statusCode).toBe(200);
    expect(await metrics.body.text()).toContain('payflow_bridge_');
  });

  it('is refused by a client that does not trust the certificate', async () => {
    const untrusting = new Agent({ connections: 1 });
    try {
      await expect(
        request(`${worker.managementUrl}/health/live`, { dispatcher: untrusting }),
      ).rejects.toThrow(/self[- ]signed|certificate/i);
    } finally {
      await untrusting.close();
    }
  });

  it('gives plain HTTP no answer from the application', async () => {
    const port = Number(new URL(worker.managementUrl).port);
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/health/live', timeout: 5_000 });
      req.on('response', (response) => {
        response.resume();
        resolve(`status ${response.statusCode ?? 0}`);
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', () => resolve('refused'));
      req.end();
    });
    expect(outcome).not.toBe('status 200');
  });
});

describe('the worker refuses to start in clear', () => {
  function environment(extra: Record<string, string>): Record<string, string> {
    return {
      ...workerEnvironment({
        databaseUrl: pipeline.database.url,
        brokers: pipeline.cluster.bootstrapServers,
        groupId: 'payflow-bridge-management-tls',
        topics: topicSetFor('management_tls_refused'),
        sandbox: { url: 'http://127.0.0.1:9', partnerUrl: 'http://127.0.0.1:9/partner' },
      }),
      LOG_LEVEL: 'info',
      ...extra,
    };
  }

  async function expectRefused(extra: Record<string, string>, line: string): Promise<void> {
    const result = await runCompiled('dist/src/main.js', environment(extra), 60_000);
    expect(result.code).toBe(1);
    expect(result.err.trim().split('\n')).toEqual([line]);
    expect(result.out).toBe('');
    expect(`${result.err}${result.out}`).not.toContain(CONSOLE_TOKEN);
  }

  it('exits 1 with one line when the console would serve plain HTTP beyond loopback', async () => {
    await expectRefused(
      { CONSOLE_TOKEN, MANAGEMENT_HOST: '0.0.0.0' },
      'Invalid configuration: MANAGEMENT_HOST is not loopback and the management port is plain ' +
        'HTTP: the console refuses to start (set MANAGEMENT_TLS_CERT_FILE and ' +
        'MANAGEMENT_TLS_KEY_FILE, or CONSOLE_BEHIND_TLS_PROXY=true behind a TLS proxy)',
    );
  });

  it('exits 1 with one line for http:// to Payflow on another machine', async () => {
    await expectRefused(
      { PAYFLOW_BASE_URL: 'http://payflow.example.com' },
      'Invalid configuration: PAYFLOW_BASE_URL must be an https:// URL: plain http:// is ' +
        'allowed only to a loopback host (127.0.0.0/8, ::1, localhost)',
    );
  });

  it('exits 1 with one line for SASL PLAIN without TLS', async () => {
    await expectRefused(
      {
        KAFKA_SASL_MECHANISM: 'plain',
        KAFKA_SASL_USERNAME: 'worker',
        KAFKA_SASL_PASSWORD: 'kafka-password-never-shown',
      },
      'Invalid configuration: KAFKA_SASL_MECHANISM is plain, which sends the password in clear ' +
        'without TLS: set KAFKA_SSL=true (or use scram-sha-256 or scram-sha-512)',
    );
  });

  it('exits 1 with one line when the files are not a certificate and its key', async () => {
    writeFileSync(join(certDir, 'garbage.pem'), 'not a certificate\n');
    const result = await runCompiled(
      'dist/src/main.js',
      environment({
        MANAGEMENT_TLS_CERT_FILE: join(certDir, 'garbage.pem'),
        MANAGEMENT_TLS_KEY_FILE: join(certDir, 'key.pem'),
      }),
      60_000,
    );
    expect(result.code).toBe(1);
    const lines = result.err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^payflow-bridge failed to start: Invalid configuration: MANAGEMENT_TLS_CERT_FILE and MANAGEMENT_TLS_KEY_FILE do not make a TLS certificate and key \([A-Z_a-z]+\)$/,
    );
    expect(result.err).not.toContain('PRIVATE KEY');
  });

  it('exits 1 with one line when the certificate file cannot be read', async () => {
    await expectRefused(
      {
        MANAGEMENT_TLS_CERT_FILE: join(certDir, 'missing.pem'),
        MANAGEMENT_TLS_KEY_FILE: join(certDir, 'key.pem'),
      },
      'payflow-bridge failed to start: Invalid configuration: MANAGEMENT_TLS_CERT_FILE names a ' +
        'file that cannot be read (ENOENT)',
    );
  });
});
