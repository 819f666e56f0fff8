/** Jest global tear-down: stops the Kafka clusters kafka-global-setup.ts started. */
import type { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';

interface TestBedGlobals {
  __kafkaTestBed?: KraftCluster[];
}

export default async function globalTeardown(): Promise<void> {
  const clusters = (globalThis as TestBedGlobals).__kafkaTestBed ?? [];
  await Promise.all(clusters.map((cluster) => cluster.stop()));
}
