/**
 * Jest global set-up of the integration project: the real Kafka test bed, started once per
 * test run. A 1-node cluster serves every end-to-end file (each names its own topics and
 * groups, see kafka-test-bed.ts); a 3-node cluster (replication factor 3,
 * min.insync.replicas 2) serves the fault tests, which kill and restart its nodes.
 *
 * The clusters' descriptor files reach the test files through environment variables, which
 * jest's workers inherit. Set TEST_KAFKA_1 / TEST_KAFKA_3 to the descriptor of a cluster
 * started elsewhere (`npm run kafka:up`) to reuse it instead.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';

type KraftModule = typeof import('../../testbed/kafka/kraft-cluster.js');

interface TestBedGlobals {
  __kafkaTestBed?: KraftCluster[];
}

export const TEST_BED_ENV = { single: 'TEST_KAFKA_1', triple: 'TEST_KAFKA_3' } as const;

/**
 * Jest loads this file as CommonJS without the test projects' module mapping, so the launcher
 * is imported by its .ts path at run time (jest's transformer compiles it on the way).
 */
async function loadLauncher(rootDir: string): Promise<KraftModule> {
  return (await import(join(rootDir, 'testbed/kafka/kraft-cluster.ts'))) as KraftModule;
}

/**
 * Makes the cluster create its consumer-offsets topic (50 partitions) now, before the test
 * files start: the first group to look for a coordinator triggers it, and on a machine busy
 * with the other suites a consumer that came first gave up with "Failed to find group
 * coordinator" and crashed, leaving its file without a reader.
 */
async function warmUpGroupCoordinator(brokers: readonly string[]): Promise<void> {
  const { Kafka, logLevel } = await import('kafkajs');
  const admin = new Kafka({
    clientId: 'test-bed-warm-up',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        await admin.describeGroups(['test-bed-warm-up']);
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  } finally {
    await admin.disconnect();
  }
}

export default async function globalSetup(
  _globalConfig: unknown,
  projectConfig: { readonly rootDir: string },
): Promise<void> {
  const wanted = [
    { variable: TEST_BED_ENV.single, nodes: 1 },
    { variable: TEST_BED_ENV.triple, nodes: 3 },
  ].filter(({ variable }) => {
    const given = process.env[variable];
    return given === undefined || !existsSync(given);
  });
  if (wanted.length === 0) return;
  const { KAFKA_VERSION, KraftCluster } = await loadLauncher(projectConfig.rootDir);
  const started = await Promise.all(
    wanted.map(async ({ variable, nodes }) => {
      const cluster = await KraftCluster.start({ nodes });
      process.env[variable] = cluster.descriptorPath;
      return { cluster, nodes };
    }),
  );
  (globalThis as TestBedGlobals).__kafkaTestBed = started.map(({ cluster }) => cluster);
  await Promise.all(started.map(({ cluster }) => warmUpGroupCoordinator(cluster.brokers)));
  const lines = started.map(
    ({ cluster, nodes }) =>
      `${nodes}-node cluster ready in ${(cluster.figures.readyMs / 1000).toFixed(1)} s, ` +
      `RSS ${cluster.figures.rssMb.join(' + ')} MB`,
  );
  process.stdout.write(`\nKafka test bed (Apache Kafka ${KAFKA_VERSION}): ${lines.join('; ')}\n`);
}
