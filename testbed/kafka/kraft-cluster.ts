/**
 * Real Apache Kafka (KRaft) on this machine, from the jars `scripts/kafka-fetch.sh` copies
 * out of Maven Central into testbed/kafka/libs: one JVM per node, each broker and controller at once,
 * on free 127.0.0.1 ports, with its own data folder under one root folder.
 *
 * Used by the test bed (test/support/kafka-global-setup.ts starts a 1-node and a 3-node
 * cluster once per test run), the benchmark, the chaos campaign and `npm run demo` with
 * DEMO_KAFKA=real. No test-framework imports.
 *
 * - start(): writes server.properties per node, formats every node's storage with
 *   `kafka.tools.StorageTool format` (concurrently), starts `kafka.Kafka`, and resolves when
 *   every broker is registered and unfenced (Metadata lists all of them).
 * - Nodes are stopped by PID. kill(id) sends SIGKILL (a crash: nothing flushed), restart(id)
 *   starts the same node on the same ports and data again, stopAll()/startAll() take the
 *   whole cluster down and up; stop() kills everything and deletes the root folder.
 * - The cluster is described by a JSON file (descriptorPath), so that another process (a
 *   jest worker, the chaos campaign's checker) can attach() to it and kill or restart nodes.
 * - Every JVM has a watchdog, a tiny `sh` loop that SIGKILLs it once the owning process is
 *   gone, so that a test run killed from outside leaves no broker behind.
 */
import { spawn, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';

const execFileAsync = promisify(execFile);

/** Where scripts/kafka-fetch.sh puts kafka_2.13 and its runtime dependencies. */
export const KAFKA_LIBS =
  process.env['KAFKA_LIBS'] ?? join(repositoryRoot(), 'testbed', 'kafka', 'libs');
/** The Kafka version of kafka/pom.xml and docker-compose.yml. */
export const KAFKA_VERSION = '3.9.1';

export interface KraftClusterOptions {
  /** 1 or 3 nodes (any count works; 3 gets replication factor 3 and min.insync.replicas 2). */
  readonly nodes: number;
  /** Parent of the cluster's root folder. Default: the OS temporary folder. */
  readonly parentDir?: string;
  /** Maximum heap of each JVM in MB. Default 384. */
  readonly heapMb?: number;
  /**
   * `fast-start` (default) compiles with C1 only: a node is up in ~2 s instead of ~4 s, at
   * some throughput; `full` is the JVM's normal tiered compilation (benchmarks).
   */
  readonly jit?: 'fast-start' | 'full';
  /** The brokers' message.max.bytes (and replica fetch size). Default 16 MiB. */
  readonly messageMaxBytes?: number;
  /** More broker properties, added last (they win). */
  readonly properties?: Readonly<Record<string, string | number | boolean>>;
  /** Give up when the cluster is not ready after this long. Default 90 s. */
  readonly readyTimeoutMs?: number;
  /**
   * Names of more listeners per node (e.g. `['SASL_SSL', 'SSL']`): each gets a free port of
   * its own, in `KraftNode.extraPorts`, for `nodeProperties` to configure.
   */
  readonly extraListeners?: readonly string[];
  /**
   * Broker properties of one node, added after `properties` (they win): e.g. `listeners`
   * with the node's extra ports. The PLAINTEXT listener on `node.port` must stay (the
   * readiness probe and the brokers use it).
   */
  readonly nodeProperties?: (
    node: KraftNode,
  ) => Readonly<Record<string, string | number | boolean>>;
  /** More arguments of `kafka.tools.StorageTool format`, e.g. `['--add-scram', '…']`. */
  readonly formatArgs?: readonly string[];
}

export interface KraftNode {
  readonly id: number;
  readonly port: number;
  readonly controllerPort: number;
  readonly dir: string;
  /** The port of each of `KraftClusterOptions.extraListeners`, by listener name. */
  readonly extraPorts?: Readonly<Record<string, number>>;
  pid: number | null;
}

/** Everything another process needs to attach to the cluster. */
export interface KraftClusterDescriptor {
  readonly clusterId: string;
  readonly root: string;
  readonly libs: string;
  readonly jvmArgs: readonly string[];
  /** The process that owns the JVMs (their watchdogs end them when it is gone). */
  readonly ownerPid: number;
  readonly nodes: KraftNode[];
}

export interface KraftStartFigures {
  /** From start() to every broker registered. */
  readonly readyMs: number;
  /** Resident memory of each JVM right after start, in MB. */
  readonly rssMb: readonly number[];
}

export class KraftCluster {
  private saves = 0;

  private constructor(
    private readonly descriptor: KraftClusterDescriptor,
    /** Where the descriptor is written (root/cluster.json). */
    readonly descriptorPath: string,
  ) {}

  /** Formats and starts a new cluster; resolves when every broker is registered. */
  static async start(
    options: KraftClusterOptions,
  ): Promise<KraftCluster & { figures: KraftStartFigures }> {
    assertLibs();
    const started = performance.now();
    const count = options.nodes;
    if (!Number.isInteger(count) || count < 1) throw new Error(`nodes must be ≥ 1, got ${count}`);
    const root = await mkdtemp(join(options.parentDir ?? tmpdir(), `kraft-${count}n-`));
    const extraListeners = options.extraListeners ?? [];
    const perNode = 2 + extraListeners.length;
    const ports = await freePorts(count * perNode);
    const nodes: KraftNode[] = Array.from({ length: count }, (_, index) => ({
      id: index + 1,
      port: ports[index * perNode] as number,
      controllerPort: ports[index * perNode + 1] as number,
      dir: join(root, `node-${index + 1}`),
      ...(extraListeners.length === 0
        ? {}
        : {
            extraPorts: Object.fromEntries(
              extraListeners.map((name, at) => [name, ports[index * perNode + 2 + at] as number]),
            ),
          }),
      pid: null,
    }));
    const heapMb = options.heapMb ?? 384;
    const jvmArgs = [
      `-Xmx${heapMb}m`,
      '-Xms64m',
      '-XX:+UseSerialGC',
      ...(options.jit === 'full' ? [] : ['-XX:TieredStopAtLevel=1']),
      '-Djava.awt.headless=true',
      `-Dlog4j.configuration=file:${join(root, 'log4j.properties')}`,
    ];
    await writeFile(join(root, 'log4j.properties'), LOG4J);
    const voters = nodes.map((node) => `${node.id}@127.0.0.1:${node.controllerPort}`).join(',');
    const clusterId = newClusterId();
    await Promise.all(
      nodes.map(async (node) => {
        await mkdir(node.dir, { recursive: true });
        const properties = {
          ...brokerProperties(node, voters, count, options.messageMaxBytes ?? 16 * 1024 * 1024),
          ...(options.properties ?? {}),
          ...(options.nodeProperties?.(node) ?? {}),
        };
        await writeFile(
          join(node.dir, 'server.properties'),
          Object.entries(properties)
            .map(([key, value]) => `${key}=${String(value)}`)
            .join('\n') + '\n',
        );
        await execFileAsync(
          'java',
          [
            ...jvmArgs.filter((arg) => !arg.startsWith('-Xmx')),
            '-cp',
            `${KAFKA_LIBS}/*`,
            'kafka.tools.StorageTool',
            'format',
            '-t',
            clusterId,
            '-c',
            join(node.dir, 'server.properties'),
            ...(options.formatArgs ?? []),
          ],
          { timeout: 60_000 },
        );
      }),
    );
    const descriptor: KraftClusterDescriptor = {
      clusterId,
      root,
      libs: KAFKA_LIBS,
      jvmArgs,
      ownerPid: process.pid,
      nodes,
    };
    const cluster = new KraftCluster(descriptor, join(root, 'cluster.json'));
    try {
      for (const node of nodes) cluster.launch(node);
      await cluster.save();
      await cluster.waitReady(
        nodes.map((node) => node.id),
        options.readyTimeoutMs ?? 90_000,
      );
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    const figures: KraftStartFigures = {
      readyMs: Math.round(performance.now() - started),
      rssMb: nodes.map((node) => (node.pid === null ? 0 : rssMb(node.pid))),
    };
    return Object.assign(cluster, { figures });
  }

  /** The cluster another process started, from its descriptor file. */
  static attach(descriptorPath: string): KraftCluster {
    const descriptor = JSON.parse(readFileSync(descriptorPath, 'utf8')) as KraftClusterDescriptor;
    return new KraftCluster(descriptor, descriptorPath);
  }

  get clusterId(): string {
    return this.descriptor.clusterId;
  }

  get nodes(): readonly KraftNode[] {
    return this.descriptor.nodes;
  }

  /** host:port of every broker. */
  get brokers(): string[] {
    return this.descriptor.nodes.map((node) => `127.0.0.1:${node.port}`);
  }

  /** The brokers comma-separated, as KAFKA_BROKERS takes them. */
  get bootstrapServers(): string {
    return this.brokers.join(',');
  }

  /** Is this node's JVM alive? */
  isRunning(id: number): boolean {
    this.refresh();
    const pid = this.node(id).pid;
    return pid !== null && processAlive(pid);
  }

  /** SIGKILLs one node (a crash: nothing flushed, no controlled shutdown). */
  async kill(id: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    this.refresh();
    const node = this.node(id);
    if (node.pid === null) return;
    const pid = node.pid;
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
    await waitForExit(pid, signal === 'SIGKILL' ? 10_000 : 30_000);
    node.pid = null;
    await this.save();
  }

  /** Starts a node again (same ports, same data); resolves when it is registered again. */
  async restart(id: number, timeoutMs = 90_000): Promise<void> {
    this.refresh();
    const node = this.node(id);
    if (node.pid !== null && processAlive(node.pid)) throw new Error(`node ${id} is running`);
    this.launch(node);
    await this.save();
    await this.waitReady([id], timeoutMs);
  }

  /** The whole cluster down (SIGKILL every node). */
  async stopAll(): Promise<void> {
    await Promise.all(this.descriptor.nodes.map((node) => this.kill(node.id)));
  }

  /** The whole cluster up again after stopAll(). */
  async startAll(timeoutMs = 90_000): Promise<void> {
    this.refresh();
    for (const node of this.descriptor.nodes) {
      if (node.pid === null || !processAlive(node.pid)) this.launch(node);
    }
    await this.save();
    await this.waitReady(
      this.descriptor.nodes.map((node) => node.id),
      timeoutMs,
    );
  }

  /** Kills every node and deletes the cluster's folder. Idempotent. */
  async stop(): Promise<void> {
    this.refresh();
    for (const node of this.descriptor.nodes) {
      if (node.pid !== null) {
        try {
          process.kill(node.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
    await Promise.all(
      this.descriptor.nodes.map(async (node) => {
        if (node.pid !== null) await waitForExit(node.pid, 10_000).catch(() => undefined);
        node.pid = null;
      }),
    );
    await rm(this.descriptor.root, {
      recursive: true,
      force: true,
      maxRetries: 10,
      retryDelay: 100,
    });
  }

  /** The last lines a node's JVM wrote (for error messages). */
  logTail(id: number, lines = 20): string {
    const file = join(this.node(id).dir, 'kafka.log');
    if (!existsSync(file)) return '';
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  }

  /**
   * Resolves when each node of `ids` answers Metadata on its own listener and lists every one
   * of `ids` as a registered broker (a node that was just restarted is asked itself, so an
   * old, not yet fenced registration does not count).
   */
  async waitReady(ids: readonly number[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer yet';
    const pending = new Set(ids);
    while (Date.now() < deadline) {
      for (const id of pending) {
        const node = this.node(id);
        if (node.pid === null || !processAlive(node.pid)) {
          throw new Error(`kafka node ${id} exited while starting:\n${this.logTail(id)}`);
        }
        const registered = await this.registeredBrokers(id).catch((error: unknown) => {
          last = `node ${id}: ${error instanceof Error ? error.message : String(error)}`;
          return null;
        });
        if (registered === null) continue;
        if (ids.every((other) => registered.includes(other))) pending.delete(id);
        else last = `node ${id} lists brokers ${registered.join(',') || 'none'}`;
      }
      if (pending.size === 0) return;
      await delay(250);
    }
    throw new Error(`kafka nodes ${ids.join(',')} not ready after ${timeoutMs} ms (${last})`);
  }

  /** Node ids that node `via` lists as brokers in its Metadata now. */
  async registeredBrokers(via: number): Promise<number[]> {
    const kafka = new Kafka({
      clientId: 'kraft-cluster-probe',
      brokers: [`127.0.0.1:${this.node(via).port}`],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1_000,
      requestTimeout: 3_000,
      retry: { retries: 0 },
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.controller === null || cluster.controller < 0) return [];
      return cluster.brokers.map((broker) => broker.nodeId).sort((a, b) => a - b);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  /**
   * Takes the nodes' PIDs from the descriptor file: another process that attached may have
   * killed or restarted nodes since (the fault tests do, from jest's workers), and the file
   * is what every process writes after each change.
   */
  private refresh(): void {
    if (!existsSync(this.descriptorPath)) return;
    const saved = JSON.parse(readFileSync(this.descriptorPath, 'utf8')) as KraftClusterDescriptor;
    for (const node of this.descriptor.nodes) {
      const current = saved.nodes.find((candidate) => candidate.id === node.id);
      if (current !== undefined) node.pid = current.pid;
    }
  }

  private node(id: number): KraftNode {
    const node = this.descriptor.nodes.find((candidate) => candidate.id === id);
    if (node === undefined) throw new Error(`no kafka node ${id}`);
    return node;
  }

  private launch(node: KraftNode): void {
    const log = openSync(join(node.dir, 'kafka.log'), 'a');
    const child = spawn(
      'java',
      [
        ...this.descriptor.jvmArgs,
        '-cp',
        `${this.descriptor.libs}/*`,
        'kafka.Kafka',
        join(node.dir, 'server.properties'),
      ],
      { stdio: ['ignore', log, log], detached: false },
    );
    closeSync(log);
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start kafka node ${node.id}`);
    node.pid = child.pid;
    // The watchdog: the JVM dies with the process that owns the cluster.
    killWhenOwnerDies(child.pid, this.descriptor.ownerPid);
  }

  /**
   * Written to a temporary file and renamed: several nodes restarting at once each save,
   * and writes in place over one another left trailing bytes that another reader choked on.
   */
  private async save(): Promise<void> {
    const temporary = `${this.descriptorPath}.${process.pid}.${++this.saves}.tmp`;
    await writeFile(temporary, JSON.stringify(this.descriptor, null, 2));
    await rename(temporary, this.descriptorPath);
  }
}

/** Reads a descriptor file without attaching (e.g. to print brokers). */
export async function readDescriptor(path: string): Promise<KraftClusterDescriptor> {
  return JSON.parse(await readFile(path, 'utf8')) as KraftClusterDescriptor;
}

/**
 * The project folder: the nearest one with package.json from the working directory up (npm
 * scripts, jest and the benchmark all run from it). Not from import.meta, so that jest can
 * load this file as CommonJS in its global set-up.
 */
function repositoryRoot(): string {
  let dir = process.cwd();
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error('package.json not found from the working directory up: set KAFKA_LIBS');
    dir = parent;
  }
  return dir;
}

function assertLibs(): void {
  if (!existsSync(join(KAFKA_LIBS, `kafka_2.13-${KAFKA_VERSION}.jar`))) {
    throw new Error(
      `Apache Kafka ${KAFKA_VERSION} jars are missing in ${KAFKA_LIBS}: run scripts/kafka-fetch.sh`,
    );
  }
}

function brokerProperties(
  node: KraftNode,
  voters: string,
  count: number,
  messageMaxBytes: number,
): Record<string, string | number | boolean> {
  const replication = Math.min(3, count);
  return {
    'process.roles': 'broker,controller',
    'node.id': node.id,
    'controller.quorum.voters': voters,
    listeners: `PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${node.port}`,
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': join(node.dir, 'data'),
    'auto.create.topics.enable': false,
    'num.partitions': 1,
    'default.replication.factor': replication,
    'min.insync.replicas': replication >= 3 ? 2 : 1,
    'offsets.topic.replication.factor': replication,
    'offsets.topic.num.partitions': 10,
    'transaction.state.log.replication.factor': replication,
    'transaction.state.log.min.isr': replication >= 3 ? 2 : 1,
    'transaction.state.log.num.partitions': 4,
    'group.initial.rebalance.delay.ms': 0,
    // A killed node's registration lapses after 6 s instead of 9 s: it can re-register
    // sooner when restarted, and its partitions move sooner; 3 s fenced live nodes whose
    // heartbeats were late on a busy machine.
    'broker.heartbeat.interval.ms': 500,
    'broker.session.timeout.ms': 6000,
    'message.max.bytes': messageMaxBytes,
    'replica.fetch.max.bytes': messageMaxBytes,
    // Two cores are shared by every JVM, Postgres and the workers: few threads each.
    'num.network.threads': 2,
    'num.io.threads': 2,
    'background.threads': 2,
    'num.replica.fetchers': 1,
    'num.recovery.threads.per.data.dir': 1,
    'log.cleaner.threads': 1,
    'log.cleaner.dedupe.buffer.size': 16 * 1024 * 1024,
  };
}

const LOG4J = [
  'log4j.rootLogger=WARN, stdout',
  'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
  'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
  'log4j.logger.kafka.server.KafkaRaftServer=INFO',
  '',
].join('\n');

/** n distinct free TCP ports on 127.0.0.1 (held open together, then released). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** Alive and not a zombie (a killed child of another process may linger as one). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (processAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} did not exit in ${timeoutMs} ms`);
    await delay(50);
  }
}

/** Resident memory of a process in MB (Linux), 0 when unknown. */
export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match?.[1] === undefined ? 0 : Math.round(Number(match[1]) / 1024);
  } catch {
    return 0;
  }
}

/**
 * A watchdog for a test-bed child process (the JVMs here, the workers of
 * testbed/worker-process.ts): a tiny detached `sh` loop that SIGKILLs the child once the
 * process that owns it is gone, so that a run killed from outside leaves nothing behind.
 */
export function killWhenOwnerDies(childPid: number, ownerPid: number = process.pid): void {
  const watchdog = spawn(
    'sh',
    [
      '-c',
      `while kill -0 ${ownerPid} 2>/dev/null && kill -0 ${childPid} 2>/dev/null; do sleep 1; done; kill -9 ${childPid} 2>/dev/null`,
    ],
    { stdio: 'ignore', detached: true },
  );
  watchdog.unref();
}

/**
 * A KRaft cluster id: 16 random bytes in URL-safe base64 (22 characters). One that starts
 * with '-' would be read by StorageTool as an option, so it starts with a letter or digit.
 */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url').slice(0, 22);
    if (/^[A-Za-z0-9]/.test(id)) return id;
  }
}
