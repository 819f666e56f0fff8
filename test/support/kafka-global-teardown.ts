/** Jest global tear-down: stops the Kafka clusters kafka-global-setup.ts started. */
import type { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';

interface TestBedGlobals {
  __kafkaTestBed?: KraftCluster[];
}

export default async function globalTeardown(): Promise<void> {
  // Every integration project names this tear-down: the first one stops the clusters.
  const globals = globalThis as TestBedGlobals;
  const clusters = globals.__kafkaTestBed ?? [];
  globals.__kafkaTestBed = [];
  await Promise.all(clusters.map((cluster) => cluster.stop()));
}
