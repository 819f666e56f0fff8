/**
 * The test bed of the property tests: the run's 1-node Kafka cluster with this file's
 * topics, a fresh database, the Payflow sandbox over HTTP, and the worker as a child process
 * (the real dist/src/main.js, testbed/worker-process.ts) so that its pid and its memory are
 * its own: a restart would show as another pid, and its RSS is not mixed with the test's
 * generated data. Plus what the tests observe it with: a topic recorder that keeps the
 * bytes' digests (dead letters carry the original key and value), a batched sender that
 * knows where each message landed, the consumer group's progress, and an RSS sampler.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import type { KraftCluster } from '../../../testbed/kafka/kraft-cluster.js';
import { WorkerProcess } from '../../../testbed/worker-process.js';
import type { SandboxOptions } from '../../../src/sandbox/sandbox.server.js';
import { buildCli } from '../../cli/cli-test-kit.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import {
  createTopicSet,
  deleteTopics,
  testKafkaCluster,
  topicSetFor,
  type TopicSet,
} from '../../support/kafka-test-bed.js';
import { workerEnvironment } from '../../support/pipeline.js';
import { startTestSandbox, type SandboxHandle } from '../../support/sandbox.js';

export const PARTITIONS = 12;

export interface PropertyBed {
  readonly cluster: KraftCluster;
  readonly topics: TopicSet;
  readonly kafka: Kafka;
  readonly producer: Producer;
  readonly database: TestDatabase;
  readonly sandbox: SandboxHandle;
  readonly groupId: string;
  readonly worker: WorkerProcess;
  /** Where the worker's log lines go (kept after the run, for a failure's diagnosis). */
  readonly logFile: string;
  stop(): Promise<void>;
}

export interface PropertyBedOptions {
  /** More worker variables (they win over the defaults). */
  readonly env?: Record<string, string>;
  readonly sandbox?: SandboxOptions;
  /** The CA of the worker's TLS certificate, for its health checks. */
  readonly ca?: string;
}

export async function startPropertyBed(
  label: string,
  options: PropertyBedOptions = {},
): Promise<PropertyBed> {
  const cluster = testKafkaCluster(1);
  const topics = topicSetFor(label);
  const groupId = `payflow-bridge-${label}-${randomUUID().slice(0, 8)}`;
  const [database, sandbox] = await Promise.all([
    createTestDatabase(label),
    startTestSandbox(options.sandbox ?? {}),
    createTopicSet(cluster, topics, { partitions: PARTITIONS }),
    buildCli(),
  ]);
  const kafka = new Kafka({
    clientId: `test-${label}`,
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const logFile = join(tmpdir(), `pfb-${label}-${groupId}.log`);
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    ...workerEnvironment({
      databaseUrl: database.url,
      brokers: cluster.bootstrapServers,
      groupId,
      topics,
      sandbox,
    }),
    DB_POOL_SIZE: '10',
    KAFKA_SESSION_TIMEOUT: '6s',
    KAFKA_FETCH_MAX_WAIT: '100ms',
    PAYFLOW_REQUEST_TIMEOUT: '5s',
    RETRY_MAX_ATTEMPTS: '5',
    SETTLEMENT_ENABLED: 'false',
    ...options.env,
  };
  let worker: WorkerProcess;
  try {
    worker = await WorkerProcess.start({
      env,
      logFile,
      startTimeoutMs: 90_000,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    });
  } catch (error) {
    await Promise.allSettled([producer.disconnect(), sandbox.close()]);
    await Promise.allSettled([database.drop(), deleteTopics(cluster, topics)]);
    throw error;
  }
  return {
    cluster,
    topics,
    kafka,
    producer,
    database,
    sandbox,
    groupId,
    worker,
    logFile,
    async stop() {
      await worker.stop();
      await producer.disconnect();
      await sandbox.close();
      await database.drop();
      await deleteTopics(cluster, topics);
    },
  };
}

// ------------------------------------------------------------------------------ sending

export interface OutgoingMessage {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: Readonly<Record<string, Buffer>>;
  readonly partition: number;
}

export interface Landed {
  readonly partition: number;
  readonly offset: string;
}

/**
 * Sends messages in order, in requests of at most `maxMessages` messages and `maxBytes`
 * bytes (a larger message alone: the broker refuses a record batch above its
 * message.max.bytes), and tells where each one landed.
 */
export async function sendBatched(
  producer: Producer,
  topic: string,
  messages: readonly OutgoingMessage[],
  limits: { readonly maxMessages?: number; readonly maxBytes?: number } = {},
): Promise<Landed[]> {
  const maxMessages = limits.maxMessages ?? 500;
  const maxBytes = limits.maxBytes ?? 4 * 1024 * 1024;
  const landed: Landed[] = [];
  let batch: OutgoingMessage[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const sent = batch;
    batch = [];
    bytes = 0;
    const metadata = await producer.send({
      topic,
      acks: -1,
      messages: sent.map((message) => ({
        key: message.key,
        value: message.value,
        partition: message.partition,
        ...(message.headers === undefined ? {} : { headers: { ...message.headers } }),
      })),
    });
    const next = new Map(
      metadata.map((entry) => [entry.partition, BigInt(entry.baseOffset ?? '0')]),
    );
    for (const message of sent) {
      const offset = next.get(message.partition);
      if (offset === undefined)
        throw new Error(`no acknowledgement for partition ${message.partition}`);
      landed.push({ partition: message.partition, offset: offset.toString() });
      next.set(message.partition, offset + 1n);
    }
  };
  for (const message of messages) {
    const size = sizeOf(message);
    if (batch.length >= maxMessages || (batch.length > 0 && bytes + size > maxBytes)) await flush();
    batch.push(message);
    bytes += size;
  }
  await flush();
  return landed;
}

function sizeOf(message: OutgoingMessage): number {
  let size = (message.key?.length ?? 0) + (message.value?.length ?? 0) + 64;
  for (const [name, value] of Object.entries(message.headers ?? {}))
    size += name.length + value.length;
  return size;
}

/**
 * Waits until the consumer group has committed every partition of `topic` up to its end:
 * by the contract, every event before a committed offset took effect or is dead-lettered.
 */
export async function waitCommittedToEnd(
  kafka: Kafka,
  groupId: string,
  topic: string,
  timeoutMs: number,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [ends, committed] = await Promise.all([
        admin.fetchTopicOffsets(topic),
        admin.fetchOffsets({ groupId, topics: [topic] }),
      ]);
      const at = new Map(
        (committed[0]?.partitions ?? []).map((entry) => [entry.partition, BigInt(entry.offset)]),
      );
      const behind = ends.filter((end) => (at.get(end.partition) ?? -1n) < BigInt(end.high));
      const lag = behind.reduce(
        (sum, end) => sum + BigInt(end.high) - BigInt(at.get(end.partition) ?? end.low),
        0n,
      );
      if (behind.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(
          `the group did not commit ${topic} to its end within ${timeoutMs} ms: ${lag} events behind on ${behind.length} partitions`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await admin.disconnect();
  }
}

// ---------------------------------------------------------------------------- recording

export interface RecordedMessage {
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly valueSha256: string;
  readonly valueBytes: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The value as text, when the recorder keeps values. */
  readonly value: string | undefined;
}

export const sha256 = (data: Buffer | null): string =>
  createHash('sha256')
    .update(data ?? Buffer.alloc(0))
    .digest('hex');

/** Reads a topic from the beginning, keeping each message's digest (and value if asked). */
export class TopicRecorder {
  readonly messages: RecordedMessage[] = [];

  private constructor(private readonly consumer: Consumer) {}

  static async start(kafka: Kafka, topic: string, keepValues: boolean): Promise<TopicRecorder> {
    const consumer = kafka.consumer({
      groupId: `recorder-${randomUUID()}`,
      sessionTimeout: 6_000,
      heartbeatInterval: 500,
      maxWaitTimeInMs: 100,
      maxBytes: 16 * 1024 * 1024,
    });
    const recorder = new TopicRecorder(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) {
          if (value !== undefined) headers[name] = String(Array.isArray(value) ? value[0] : value);
        }
        recorder.messages.push({
          partition,
          offset: message.offset,
          key: message.key,
          valueSha256: sha256(message.value),
          valueBytes: message.value?.length ?? 0,
          headers,
          value: keepValues ? (message.value?.toString('utf8') ?? '') : undefined,
        });
        await Promise.resolve();
      },
    });
    return recorder;
  }

  /** Parsed JSON values (a recorder that keeps values). */
  json<T>(): T[] {
    return this.messages.map((message) => JSON.parse(message.value ?? 'null') as T);
  }

  async waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (!(await this.until(predicate, timeoutMs))) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
  }

  /** Whether `predicate` came true within `timeoutMs` (checked every 100 ms). */
  async until(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return true;
  }

  stop(): Promise<void> {
    return this.consumer.disconnect();
  }
}

// --------------------------------------------------------------------------------- memory

export interface RssSample {
  readonly atMs: number;
  readonly rssMb: number;
}

export interface RssSummary {
  readonly samples: number;
  readonly peakMb: number;
  /** Median of the first and of the last quarter of the samples after the warm-up. */
  readonly firstQuarterMb: number;
  readonly lastQuarterMb: number;
}

/**
 * Samples the worker's resident set size at a fixed interval: from Linux's /proc, else
 * from the worker's own gauge (payflow_bridge_process_resident_memory_bytes on /metrics).
 */
export class RssSampler {
  readonly samples: RssSample[] = [];
  private running = true;
  private warmUpEnd = 0;
  private readonly loop: Promise<void>;
  private readonly startedAt = performance.now();

  constructor(
    private readonly worker: WorkerProcess,
    private readonly intervalMs = 200,
  ) {
    this.loop = this.run();
  }

  /**
   * Marks the end of the warm-up (the heap growing to its working size, code being
   * compiled): the quarters compared are those of the samples taken after it.
   */
  warmedUp(): void {
    this.warmUpEnd = this.samples.length;
  }

  async stop(): Promise<RssSummary> {
    this.running = false;
    await this.loop;
    await this.sample();
    const all = this.samples.map((sample) => sample.rssMb);
    const steady = all.slice(this.warmUpEnd);
    const quarter = Math.max(1, Math.floor(steady.length / 4));
    return {
      samples: steady.length,
      peakMb: all.length === 0 ? 0 : Math.max(...all),
      firstQuarterMb: median(steady.slice(0, quarter)),
      lastQuarterMb: median(steady.slice(-quarter)),
    };
  }

  private async run(): Promise<void> {
    while (this.running && this.worker.alive) {
      await this.sample();
      await new Promise((resolve) => setTimeout(resolve, this.intervalMs));
    }
  }

  private async sample(): Promise<void> {
    if (!this.worker.alive) return;
    const rssMb = readProcRssMb(this.worker.pid) ?? (await this.metricRssMb());
    if (rssMb !== undefined) {
      this.samples.push({ atMs: performance.now() - this.startedAt, rssMb });
    }
  }

  private async metricRssMb(): Promise<number | undefined> {
    const bytes = await this.worker.metric('payflow_bridge_process_resident_memory_bytes');
    return bytes === undefined ? undefined : bytes / 1024 / 1024;
  }
}

function readProcRssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return match?.[1] === undefined ? undefined : Number(match[1]) / 1024;
  } catch {
    return undefined;
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** The first `count` items as one line each, for a failure message. */
export function listSome(lines: readonly string[], count = 15): string {
  const shown = lines.slice(0, count).map((line) => `  - ${line}`);
  if (lines.length > count) shown.push(`  … and ${lines.length - count} more`);
  return shown.join('\n');
}
