/**
 * The dependency rules (.dependency-cruiser.cjs, run by `npm run check`) fail on an import
 * against the floors. Scratch files that import against them are written into a temporary
 * copy of src (never into src itself, which other runs of tsc and depcruise read; the copy
 * is removed in `finally`), and one depcruise run over them must fail, naming each broken
 * rule: the bottom floor importing a feature, a feature importing a higher one, a feature
 * importing the read side, a feature importing the Kafka adapters, two peers of one floor
 * importing each other, and the management listener importing the console it serves. Scratch files importing the allowed way (the read side a
 * feature, tracing its peer payflow) are named by none.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const ROOT = process.cwd();

/** Scratch files, by path in the copy, and what each imports. */
const SCRATCH = {
  errorsToFeature: {
    path: 'src/errors/__scratch-layer-violation.ts',
    name: 'OrderRepository',
    imports: '../orders/order.repository.js',
  },
  lowerFeatureToHigher: {
    path: 'src/events/__scratch-layer-violation.ts',
    name: 'OrderRepository',
    imports: '../orders/order.repository.js',
  },
  featureToOperator: {
    path: 'src/orders/__scratch-layer-violation.ts',
    name: 'OrderShowQuery',
    imports: '../operator/order-show/order-show.query.js',
  },
  featureToKafkaAdapter: {
    path: 'src/outbox/__scratch-layer-violation.ts',
    name: 'KafkaMessageProducer',
    imports: '../messaging/kafka/kafka.producer.js',
  },
  peerOneWay: {
    path: 'src/webhooks/__scratch-layer-violation.ts',
    name: 'SettlementRepository',
    imports: '../settlements/settlement.repository.js',
  },
  peerOtherWay: {
    path: 'src/settlements/__scratch-layer-violation.ts',
    name: 'WebhookInboxRepository',
    imports: '../webhooks/inbox/webhook-inbox.repository.js',
  },
  appPeerTheOtherWay: {
    path: 'src/management/__scratch-layer-violation.ts',
    name: 'CONSOLE_PREFIX',
    imports: '../console/console.options.js',
  },
  operatorToFeature: {
    path: 'src/operator/__scratch-layer-allowed.ts',
    name: 'OrderRepository',
    imports: '../orders/order.repository.js',
  },
  tracingToPeerPayflow: {
    path: 'src/tracing/__scratch-layer-allowed.ts',
    name: 'PAYFLOW_CALL_TRACER',
    imports: '../payflow/payflow-trace.js',
  },
} as const;

interface Run {
  readonly code: number;
  readonly output: string;
}

function depcruise(cwd: string, files: readonly string[]): Promise<Run> {
  const bin = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  const args = [bin, ...files, '--config', '.dependency-cruiser.cjs', '--max-depth', '1'];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

describe('dependency rules', () => {
  it('fail on an import against the floors or between peers, and pass the allowed directions', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'payflow-layers-'));
    try {
      cpSync(join(ROOT, 'src'), join(copy, 'src'), { recursive: true });
      cpSync(join(ROOT, 'tsconfig.json'), join(copy, 'tsconfig.json'));
      cpSync(join(ROOT, '.dependency-cruiser.cjs'), join(copy, '.dependency-cruiser.cjs'));
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
      for (const scratch of Object.values(SCRATCH)) {
        writeFileSync(
          join(copy, scratch.path),
          `export { ${scratch.name} as Scratch } from '${scratch.imports}';\n`,
        );
      }

      const run = await depcruise(
        copy,
        Object.values(SCRATCH).map((scratch) => scratch.path),
      );

      expect(run.code).not.toBe(0);
      const broken = [
        'floor-errors: src/errors/__scratch-layer-violation.ts → src/orders/order.repository.ts',
        'floor-events: src/events/__scratch-layer-violation.ts → src/orders/order.repository.ts',
        'floor-orders: src/orders/__scratch-layer-violation.ts → src/operator/order-show/order-show.query.ts',
        'features-only-messaging-ports: src/outbox/__scratch-layer-violation.ts → src/messaging/kafka/kafka.producer.ts',
        'floor-webhooks: src/webhooks/__scratch-layer-violation.ts → src/settlements/settlement.repository.ts',
        'floor-settlements: src/settlements/__scratch-layer-violation.ts → src/webhooks/inbox/webhook-inbox.repository.ts',
        'floor-management: src/management/__scratch-layer-violation.ts → src/console/console.options.ts',
      ];
      for (const line of broken) expect(run.output).toContain(line);
      expect(run.output).not.toContain(SCRATCH.operatorToFeature.path);
      expect(run.output).not.toContain(SCRATCH.tracingToPeerPayflow.path);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
