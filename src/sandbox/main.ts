/**
 * `npm run sandbox`: the Payflow sandbox as a process. Environment: SANDBOX_PORT (4010),
 * SANDBOX_HOST (127.0.0.1), SANDBOX_LATENCY_MS (0), SANDBOX_TOKEN_TTL_SECONDS (3600),
 * SANDBOX_WEBHOOK_CA_FILE (extra CA for webhook HTTPS), SANDBOX_WEBHOOK_WHITELIST
 * (comma-separated domains; default localhost,127.0.0.1), SANDBOX_SHAPES (standard, or
 * alternate: other legal shapes where the spec leaves them open), SANDBOX_LOG_LEVEL (info),
 * SANDBOX_CLIENT_SECRET_FILE (the built-in client's secret, from a file: the file's content,
 * one trailing newline removed; default sandbox-secret), and what it keeps at most over a
 * long run (docs/sandbox.md): SANDBOX_MAX_PAYMENTS (25000), SANDBOX_MAX_WEBHOOK_DELIVERIES
 * (20000), SANDBOX_MAX_SETTLEMENT_MOVEMENTS (500000), how far its heap grows past what is
 * live, SANDBOX_HEAP_GROWTH_PERCENT (50), and the share of settlement lines booked a night
 * late, SANDBOX_SETTLEMENT_LATE_PERCENT (10), chosen by SANDBOX_SETTLEMENT_SEED (29).
 */
import { readFile } from 'node:fs/promises';
import { limitHeapGrowth } from '../memory/heap-growth.js';
import { createLogger } from '../logging/logger.js';
import { parseSandboxEnv } from './sandbox.config.js';
import { startSandbox } from './sandbox.server.js';

async function main(): Promise<void> {
  const parsed = parseSandboxEnv(process.env);
  if (!parsed.ok) {
    process.stderr.write(`${parsed.error}\n`);
    process.exit(1);
  }
  const env = parsed.env;
  // What the sandbox keeps is bounded (docs/sandbox.md); this bounds the garbage around it,
  // as the worker does (src/main.ts): heap ~ live x (1 + SANDBOX_HEAP_GROWTH_PERCENT %).
  limitHeapGrowth(env.SANDBOX_HEAP_GROWTH_PERCENT);
  let webhookCa: Buffer | undefined;
  if (env.SANDBOX_WEBHOOK_CA_FILE !== undefined) {
    try {
      webhookCa = await readFile(env.SANDBOX_WEBHOOK_CA_FILE);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      process.stderr.write(`Invalid SANDBOX_WEBHOOK_CA_FILE: cannot read it (${reason})\n`);
      process.exit(1);
    }
  }
  let defaultClientSecret: string | undefined;
  if (env.SANDBOX_CLIENT_SECRET_FILE !== undefined) {
    try {
      defaultClientSecret = (await readFile(env.SANDBOX_CLIENT_SECRET_FILE, 'utf8')).replace(
        /\r?\n$/,
        '',
      );
    } catch (error) {
      const code =
        typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
      process.stderr.write(`Invalid SANDBOX_CLIENT_SECRET_FILE: cannot read it (${code})\n`);
      process.exit(1);
    }
    if (defaultClientSecret === '') {
      process.stderr.write('Invalid SANDBOX_CLIENT_SECRET_FILE: the file is empty\n');
      process.exit(1);
    }
  }
  const logger = createLogger({ name: 'payflow-sandbox', level: env.SANDBOX_LOG_LEVEL });
  const sandbox = await startSandbox({
    port: env.SANDBOX_PORT,
    host: env.SANDBOX_HOST,
    latencyMs: env.SANDBOX_LATENCY_MS,
    tokenTtlSeconds: env.SANDBOX_TOKEN_TTL_SECONDS,
    shapes: env.SANDBOX_SHAPES,
    logger,
    retention: {
      maxPayments: env.SANDBOX_MAX_PAYMENTS,
      maxWebhookDeliveries: env.SANDBOX_MAX_WEBHOOK_DELIVERIES,
      maxMovements: env.SANDBOX_MAX_SETTLEMENT_MOVEMENTS,
    },
    settlement: {
      latePercent: env.SANDBOX_SETTLEMENT_LATE_PERCENT,
      seed: env.SANDBOX_SETTLEMENT_SEED,
    },
    ...(webhookCa ? { webhookCa } : {}),
    ...(defaultClientSecret === undefined ? {} : { defaultClientSecret }),
    ...(env.SANDBOX_WEBHOOK_WHITELIST ? { webhookWhitelist: env.SANDBOX_WEBHOOK_WHITELIST } : {}),
  });
  process.stdout.write(
    `Payflow sandbox: group A ${sandbox.url} · group B ${sandbox.partnerUrl} · control ${sandbox.controlUrl}\n`,
  );
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'sandbox close failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Payflow sandbox failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
