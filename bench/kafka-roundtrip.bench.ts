/**
 * The floor under the pipeline's latency: how long one message takes from a producer to a
 * consumer on the real 3-node KRaft cluster of the test bed, with nothing of ours in
 * between. The pipeline crosses Kafka twice (ERP event in, status event out), so its p99
 * at a paced rate cannot be lower than about twice this one's.
 *
 * Paced at BENCH_RATE messages/s (500) for BENCH_WARMUP_SECONDS (15, not counted) and then
 * BENCH_SECONDS (20), what is due sent every BENCH_SEND_INTERVAL_MS (50) as the worker's relay
 * sends (idempotent producer, acks=all, one request a partition, 12 partitions), read by a
 * kafkajs consumer group; latency = read time − send time, both in this one process.
 * Run with `npm run bench:kafka`; writes bench/results/kafka-roundtrip.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { kafkaClientOptionsFromConfig } from '../src/messaging/kafka/kafka.client.js';
import { KafkaMessageProducer } from '../src/messaging/kafka/kafka.producer.js';
import { KraftCluster } from '../testbed/kafka/kraft-cluster.js';
import { createTopics } from '../testbed/kafka-io.js';
import { percentiles } from './pipeline/load.js';

const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
/** Sent first at the same rate and not counted: the JVMs' JIT and the clients warm up. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 15);
/** How often the producer sends what became due (one sendBatch, a partition batch each). */
const SEND_INTERVAL_MS = Number(process.env.BENCH_SEND_INTERVAL_MS ?? 50);
const TOPIC = 'roundtrip';

async function main(): Promise<void> {
  const log = (line: string): void => void process.stdout.write(`${line}\n`);
  log('starting a 3-node KRaft cluster (full JIT)');
  const cluster = await KraftCluster.start({ nodes: 3, jit: 'full' });
  try {
    await createTopics(cluster.brokers, [{ topic: TOPIC, partitions: 12 }], 3);
    const kafka = new Kafka({
      clientId: 'roundtrip',
      brokers: [...cluster.brokers],
      logLevel: logLevel.NOTHING,
    });
    // The worker's producer, its client built as the worker builds it (plaintext here).
    const producer = new KafkaMessageProducer(
      kafkaClientOptionsFromConfig({
        KAFKA_BROKERS: cluster.brokers,
        KAFKA_CLIENT_ID: 'roundtrip-producer',
        KAFKA_SSL: false,
      }),
      { idempotent: process.env.BENCH_IDEMPOTENT !== 'false' },
    );
    await producer.connect();
    const consumer = kafka.consumer({ groupId: 'roundtrip', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
    const joined = new Promise<void>((resolve) => {
      consumer.on(consumer.events.GROUP_JOIN, () => resolve());
    });
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    const acks: number[] = [];
    await consumer.run({
      eachMessage: ({ message }) => {
        const id = message.key?.toString() ?? '';
        const started = sentAt.get(id);
        if (started !== undefined && Number(id.slice(2)) >= warmup) {
          latencies.push(performance.now() - started);
        }
        return Promise.resolve();
      },
    });
    await joined;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const warmup = RATE * WARMUP_SECONDS;
    const total = warmup + RATE * SECONDS;
    const began = performance.now();
    let next = 0;
    const sends: Promise<void>[] = [];
    while (next < total) {
      const due = Math.min(total, Math.floor(((performance.now() - began) / 1000) * RATE) + 1);
      const batch = [];
      for (; next < due; next++) {
        const key = `m-${next}`;
        sentAt.set(key, performance.now());
        batch.push({ topic: TOPIC, key, value: JSON.stringify({ n: next }) });
      }
      if (batch.length > 0) {
        const sendStarted = performance.now();
        const counted = next > warmup;
        sends.push(
          producer.send(batch).then(() => {
            if (counted) acks.push(performance.now() - sendStarted);
          }),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, SEND_INTERVAL_MS));
    }
    await Promise.all(sends);
    const deadline = Date.now() + 30_000;
    while (latencies.length < total - warmup && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await consumer.disconnect();
    await producer.disconnect();
    const ackPercentiles = percentiles(acks);
    const result = {
      name: 'Kafka round trip (3-node KRaft, acks=all)',
      date: new Date().toISOString(),
      node: process.version,
      cores: cpus().length,
      rate: RATE,
      sendIntervalMs: SEND_INTERVAL_MS,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      sent: total - warmup,
      received: latencies.length,
      latencyMs: percentiles(latencies),
      sendAcknowledgedMs: { p50: ackPercentiles.p50, p99: ackPercentiles.p99 },
    };
    log(
      `${result.received}/${total - warmup} read back; produce → consume p50 ${result.latencyMs.p50} ms, ` +
        `p95 ${result.latencyMs.p95} ms, p99 ${result.latencyMs.p99} ms, max ${result.latencyMs.max} ms; ` +
        `send → acknowledged p50 ${result.sendAcknowledgedMs.p50} ms, p99 ${result.sendAcknowledgedMs.p99} ms`,
    );
    const directory = fileURLToPath(new URL('../../bench/results/', import.meta.url));
    await mkdir(directory, { recursive: true });
    await writeFile(`${directory}kafka-roundtrip.json`, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await cluster.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
