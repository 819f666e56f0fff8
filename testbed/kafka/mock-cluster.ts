/**
 * In-process Kafka test cluster backed by librdkafka's built-in mock cluster
 * (`rdkafka_mock.h`), driven from Node through the `koffi` FFI package.
 *
 * The mock brokers listen on 127.0.0.1 (random ports) and speak the real Kafka wire
 * protocol, so kafkajs connects to them like to any other cluster. No test-framework
 * imports here on purpose: demo scripts can use this module too.
 *
 * Quirks of the librdkafka 2.0.2 mock (Debian `librdkafka1`) seen from kafkajs 2.2.4,
 * found by experiment (and cross-checked against the librdkafka sources):
 *
 * Topics / metadata
 * - Supported APIs (key:versions): Produce 0:0-7, Fetch 1:0-11, ListOffsets 2:0-5,
 *   Metadata 3:0-2, OffsetCommit 8:0-7, OffsetFetch 9:0-5, FindCoordinator 10:0-2,
 *   JoinGroup 11:0-5, Heartbeat 12:0-3, LeaveGroup 13:0-1, SyncGroup 14:0-3,
 *   ApiVersions 18, InitProducerId 22, AddPartitionsToTxn 24, AddOffsetsToTxn 25,
 *   EndTxn 26, TxnOffsetCommit 28. Nothing else (no CreateTopics, DescribeGroups,
 *   ListGroups, DeleteTopics, SASL).
 * - Create topics with {@link KafkaMockCluster.createTopic}. kafkajs
 *   `admin.createTopics()` fails with "Broker 0 not found in the cached metadata": the
 *   Metadata ControllerId is not a real broker (there is no controller).
 * - Unknown topics are ALWAYS auto-created (4 partitions) by any Metadata request that
 *   names them, e.g. a producer send or a consumer subscribe. Metadata is capped at v2,
 *   which has no AllowAutoTopicCreation field, so kafkajs `allowAutoTopicCreation: false`
 *   has no effect. A typo in a topic name therefore silently creates a topic.
 * - Partition leaders are spread over brokers 1..N at creation and never move (no
 *   controller, no failover).
 *
 * Producers
 * - `idempotent: true` fails ("Broker 0 not found"): kafkajs sends InitProducerId to the
 *   controller. Use `idempotent: false`.
 * - {@link KafkaMockCluster.brokerDown} closes the broker's listener (clients get
 *   ECONNREFUSED) and its connections; it stays in Metadata and keeps leading its
 *   partitions, so sends to those partitions retry (kafkajs `retry`) until
 *   {@link KafkaMockCluster.brokerUp}; partitions led by other brokers are unaffected.
 *
 * Consumer groups (FindCoordinator, Join/Sync/Heartbeat/Leave, OffsetCommit/Fetch work;
 * admin.fetchOffsets and admin.fetchTopicOffsets work; describeGroups/listGroups don't)
 * - First join of an empty group: the join window is a fixed 3 s, so the first
 *   `consumer.run()` resolves after ~3 s. Members joining within that window share one
 *   generation: start all members concurrently.
 * - Any later (re)join - a member added to a running group, a member leaving or timing
 *   out - holds the join window for `sessionTimeout - 1000` ms even when everybody has
 *   re-joined already. kafkajs's default sessionTimeout 30000 makes that 29 s, so give
 *   test consumers e.g. `sessionTimeout: 6000, heartbeatInterval: 500` (rebalance ~5 s).
 * - SyncGroup race, see {@link mockSafePartitionAssigner}: use it for every group with
 *   two or more kafkajs members, or ~10% of group formations lose a member.
 * - kafkajs `maxWaitTimeInMs` (default 5000) is honoured as the fetch long-poll, and
 *   `consumer.disconnect()` waits for the in-flight fetch: use e.g. 100 in tests.
 * - The coordinator is a hash of the group id over the brokers; bringing that broker
 *   down stalls the group (no coordinator failover).
 *
 * Lifecycle
 * - `rd_kafka_mock_topic_create` aborts the whole process (failed assertion) on a
 *   negative partition count and accepts junk (0 partitions, empty name), so arguments
 *   are validated here before calling into C.
 * - librdkafka's threads do not keep the Node event loop alive, and exiting with a
 *   cluster still running neither hung nor crashed in experiments. `stop()` is still the
 *   clean way; an 'exit' hook destroys forgotten clusters best-effort. (Inside jest the
 *   test's `process` is a sandbox copy, so that hook may never fire there: call stop().)
 * - Destroying takes ~2 ms. Disconnect kafkajs clients before `stop()`, otherwise they
 *   keep retrying against the vanished ports.
 */
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import koffi, { type LibraryHandle } from 'koffi';
import { PartitionAssigners, type PartitionAssigner } from 'kafkajs';

/** Raw pointer as koffi 3 hands it out (a bigint address); opaque to us. */
type Pointer = unknown;
/** Node-style callback used by koffi's `.async` calls. */
type AsyncCallback = (err: unknown, result: unknown) => void;

interface AsyncCapable {
  async: (...args: unknown[]) => void;
}

/** Typed facade over the few librdkafka entry points we use. */
interface RdKafkaBindings {
  versionStr: () => unknown;
  confNew: () => Pointer;
  confSet: (
    conf: Pointer,
    name: string,
    value: string,
    errstr: Buffer,
    errstrSize: number,
  ) => unknown;
  confDestroy: (conf: Pointer) => unknown;
  kafkaNew: (type: number, conf: Pointer, errstr: Buffer, errstrSize: number) => Pointer;
  kafkaDestroy: ((rk: Pointer) => unknown) & AsyncCapable;
  err2name: (err: number) => unknown;
  mockClusterNew: (rk: Pointer, brokerCnt: number) => Pointer;
  mockClusterDestroy: ((mcluster: Pointer) => unknown) & AsyncCapable;
  mockClusterBootstraps: (mcluster: Pointer) => unknown;
  mockTopicCreate: (
    mcluster: Pointer,
    topic: string,
    partitionCnt: number,
    replicationFactor: number,
  ) => unknown;
  mockBrokerSetDown: (mcluster: Pointer, brokerId: number) => unknown;
  mockBrokerSetUp: (mcluster: Pointer, brokerId: number) => unknown;
}

/** `librdkafka.so` only exists with the -dev package; the runtime package ships `.so.1`. */
const LIBRARY_NAME = 'librdkafka.so.1';
const RD_KAFKA_PRODUCER = 0;
const RD_KAFKA_CONF_OK = 0;
const RD_KAFKA_RESP_ERR_NO_ERROR = 0;
const ERRSTR_SIZE = 512;
const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

let cachedBindings: RdKafkaBindings | undefined;

/**
 * Loads librdkafka once per module instance. Only plain C types (`void *`, `int`,
 * strings) are used, never named koffi types, so it is also safe when jest evaluates
 * this module again per test file in the same worker: koffi.load() of an already
 * loaded library is just a refcounted dlopen, and nothing is registered globally.
 */
function bindings(): RdKafkaBindings {
  if (cachedBindings) return cachedBindings;
  let lib: LibraryHandle;
  try {
    lib = koffi.load(LIBRARY_NAME);
  } catch (err) {
    throw new Error(
      `KafkaMockCluster: cannot load ${LIBRARY_NAME} (install the Debian/Ubuntu package "librdkafka1"): ${errorMessage(err)}`,
      { cause: err },
    );
  }
  const loaded: RdKafkaBindings = {
    versionStr: lib.func('const char *rd_kafka_version_str(void)'),
    confNew: lib.func('void *rd_kafka_conf_new(void)'),
    confSet: lib.func(
      'int rd_kafka_conf_set(void *conf, const char *name, const char *value, char *errstr, size_t errstr_size)',
    ),
    confDestroy: lib.func('void rd_kafka_conf_destroy(void *conf)'),
    kafkaNew: lib.func(
      'void *rd_kafka_new(int type, void *conf, char *errstr, size_t errstr_size)',
    ),
    kafkaDestroy: lib.func('void rd_kafka_destroy(void *rk)'),
    err2name: lib.func('const char *rd_kafka_err2name(int err)'),
    mockClusterNew: lib.func('void *rd_kafka_mock_cluster_new(void *rk, int broker_cnt)'),
    mockClusterDestroy: lib.func('void rd_kafka_mock_cluster_destroy(void *mcluster)'),
    mockClusterBootstraps: lib.func('const char *rd_kafka_mock_cluster_bootstraps(void *mcluster)'),
    mockTopicCreate: lib.func(
      'int rd_kafka_mock_topic_create(void *mcluster, const char *topic, int partition_cnt, int replication_factor)',
    ),
    mockBrokerSetDown: lib.func(
      'int rd_kafka_mock_broker_set_down(void *mcluster, int32_t broker_id)',
    ),
    mockBrokerSetUp: lib.func('int rd_kafka_mock_broker_set_up(void *mcluster, int32_t broker_id)'),
  };
  cachedBindings = loaded;
  return loaded;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isNullPointer(p: Pointer): boolean {
  return p === null || p === undefined || p === 0 || p === 0n;
}

function asInt(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new Error(`KafkaMockCluster: ${what} returned a non-integer (${typeof value})`);
  }
  return value;
}

function asString(value: unknown, what: string): string {
  if (typeof value !== 'string') {
    throw new Error(`KafkaMockCluster: ${what} returned ${value === null ? 'NULL' : typeof value}`);
  }
  return value;
}

function cString(buf: Buffer): string {
  const end = buf.indexOf(0);
  return buf.toString('utf8', 0, end === -1 ? buf.length : end);
}

function errName(lib: RdKafkaBindings, code: number): string {
  const name = lib.err2name(code);
  return typeof name === 'string' ? name : `error ${code}`;
}

function callAsync(fn: AsyncCapable, ...args: unknown[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done: AsyncCallback = (err) => {
      if (err)
        reject(
          err instanceof Error ? err : new Error(`koffi async call failed: ${errorMessage(err)}`),
        );
      else resolve();
    };
    fn.async(...args, done);
  });
}

/** Resolves once something accepts TCP connections on host:port. */
function probe(hostPort: string, timeoutMs: number): Promise<void> {
  const idx = hostPort.lastIndexOf(':');
  const host = hostPort.slice(0, idx);
  const port = Number(hostPort.slice(idx + 1));
  return new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `KafkaMockCluster: mock broker ${hostPort} did not accept a connection in ${timeoutMs} ms`,
        ),
      );
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(`KafkaMockCluster: mock broker ${hostPort} not reachable: ${err.message}`));
    });
  });
}

export interface KafkaMockClusterOptions {
  /** Number of mock brokers (ids 1..brokers). Default 3. */
  brokers?: number;
  /** Topics to create up front (replication factor min(3, brokers)). */
  topics?: Array<{ name: string; partitions: number }>;
  /**
   * librdkafka `debug` contexts for the hosting rd_kafka_t, e.g. 'mock' to see the mock's
   * consumer-group state machine on stderr. Defaults to env KAFKA_MOCK_DEBUG, else off.
   */
  debug?: string;
}

export class KafkaMockCluster {
  /** Comma-separated `host:port` list, e.g. for KAFKA_BROKERS. */
  readonly bootstrapServers: string;
  /** Same as {@link bootstrapServers}, split; pass to `new Kafka({ brokers })`. */
  readonly brokers: string[];
  /** Number of brokers; valid broker ids are 1..brokerCount. */
  readonly brokerCount: number;

  private rk: Pointer;
  private mcluster: Pointer;
  private stopPromise: Promise<void> | undefined;
  private readonly exitHook = (): void => this.destroySync();

  private constructor(
    rk: Pointer,
    mcluster: Pointer,
    brokerCount: number,
    bootstrapServers: string,
  ) {
    this.rk = rk;
    this.mcluster = mcluster;
    this.brokerCount = brokerCount;
    this.bootstrapServers = bootstrapServers;
    this.brokers = bootstrapServers.split(',').filter((s) => s.length > 0);
    process.once('exit', this.exitHook);
  }

  /** librdkafka version string, e.g. "2.0.2". */
  static librdkafkaVersion(): string {
    return asString(bindings().versionStr(), 'rd_kafka_version_str');
  }

  static async start(opts: KafkaMockClusterOptions = {}): Promise<KafkaMockCluster> {
    const brokerCount = opts.brokers ?? 3;
    if (!Number.isInteger(brokerCount) || brokerCount < 1 || brokerCount > 64) {
      throw new Error(`KafkaMockCluster: brokers must be an integer in 1..64, got ${brokerCount}`);
    }
    const lib = bindings();
    const errstr = Buffer.alloc(ERRSTR_SIZE);

    const conf = lib.confNew();
    if (isNullPointer(conf)) throw new Error('KafkaMockCluster: rd_kafka_conf_new returned NULL');
    // The owning producer has no bootstrap.servers of its own (it only hosts the mock),
    // which librdkafka reports as a NOTICE (level 5) CONFWARN; keep warnings and errors.
    const settings: Array<[string, string]> = [
      ['log_level', '4'],
      ['client.id', 'kafka-mock-cluster'],
    ];
    const debug = opts.debug ?? process.env['KAFKA_MOCK_DEBUG'];
    if (debug) settings.push(['debug', debug], ['log_level', '7']);
    for (const [name, value] of settings) {
      const res = asInt(lib.confSet(conf, name, value, errstr, ERRSTR_SIZE), 'rd_kafka_conf_set');
      if (res !== RD_KAFKA_CONF_OK) {
        lib.confDestroy(conf);
        throw new Error(
          `KafkaMockCluster: rd_kafka_conf_set(${name}=${value}) failed: ${cString(errstr)}`,
        );
      }
    }

    // rd_kafka_new takes ownership of conf only on success.
    const rk = lib.kafkaNew(RD_KAFKA_PRODUCER, conf, errstr, ERRSTR_SIZE);
    if (isNullPointer(rk)) {
      lib.confDestroy(conf);
      throw new Error(`KafkaMockCluster: rd_kafka_new failed: ${cString(errstr)}`);
    }

    const mcluster = lib.mockClusterNew(rk, brokerCount);
    if (isNullPointer(mcluster)) {
      lib.kafkaDestroy(rk);
      throw new Error('KafkaMockCluster: rd_kafka_mock_cluster_new returned NULL');
    }

    const bootstraps = asString(
      lib.mockClusterBootstraps(mcluster),
      'rd_kafka_mock_cluster_bootstraps',
    );
    const cluster = new KafkaMockCluster(rk, mcluster, brokerCount, bootstraps);
    try {
      // Listeners are bound synchronously by rd_kafka_mock_cluster_new; this only proves it.
      await Promise.all(cluster.brokers.map((b) => probe(b, 5000)));
      for (const t of opts.topics ?? []) cluster.createTopic(t.name, t.partitions);
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** True until {@link stop} has been called. */
  get running(): boolean {
    return this.stopPromise === undefined && !isNullPointer(this.mcluster);
  }

  /**
   * Creates a topic on the mock (the only way: CreateTopics is not implemented).
   * Replication factor defaults to min(3, brokers). Throws on TOPIC_ALREADY_EXISTS etc.
   */
  createTopic(name: string, partitions: number, replicationFactor?: number): void {
    const mcluster = this.requireRunning('createTopic');
    const rf = replicationFactor ?? Math.min(3, this.brokerCount);
    // Validate first: the C side aborts the process on negative counts and accepts junk.
    if (!TOPIC_NAME.test(name)) {
      throw new Error(`KafkaMockCluster.createTopic: invalid topic name ${JSON.stringify(name)}`);
    }
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > 100_000) {
      throw new Error(
        `KafkaMockCluster.createTopic(${name}): partitions must be a positive integer, got ${partitions}`,
      );
    }
    if (!Number.isInteger(rf) || rf < 1 || rf > this.brokerCount) {
      throw new Error(
        `KafkaMockCluster.createTopic(${name}): replicationFactor must be an integer in 1..${this.brokerCount}, got ${rf}`,
      );
    }
    const lib = bindings();
    const err = asInt(
      lib.mockTopicCreate(mcluster, name, partitions, rf),
      'rd_kafka_mock_topic_create',
    );
    if (err !== RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw new Error(
        `KafkaMockCluster.createTopic(${name}, ${partitions}, ${rf}) failed: ${errName(lib, err)}`,
      );
    }
  }

  /**
   * Takes a broker down: closes its client connections and refuses new ones. It stays in
   * Metadata responses and keeps leading its partitions (no controller, no failover), so
   * clients retry until {@link brokerUp}.
   */
  brokerDown(id: number): void {
    this.setBrokerState(id, false);
  }

  /** Brings a broker taken down with {@link brokerDown} back. */
  brokerUp(id: number): void {
    this.setBrokerState(id, true);
  }

  /**
   * Destroys the mock cluster and its owning rd_kafka_t. Idempotent; concurrent calls
   * share one promise. Disconnect kafkajs clients first, or they will log connection
   * errors while they retry against the vanished brokers.
   */
  stop(): Promise<void> {
    this.stopPromise ??= this.destroyAsync();
    return this.stopPromise;
  }

  private async destroyAsync(): Promise<void> {
    const lib = bindings();
    const mcluster = this.mcluster;
    const rk = this.rk;
    // Run the (thread-joining) destroys off the JS thread. While they are in flight the
    // exit hook must not touch the pointers again, so clear them first.
    this.mcluster = null;
    this.rk = null;
    try {
      // Order matters: the mock cluster uses the rd_kafka_t for timers/logging.
      if (!isNullPointer(mcluster)) await callAsync(lib.mockClusterDestroy, mcluster);
      if (!isNullPointer(rk)) await callAsync(lib.kafkaDestroy, rk);
    } finally {
      process.removeListener('exit', this.exitHook);
    }
  }

  /** Best-effort synchronous cleanup for the process 'exit' hook (user forgot stop()). */
  private destroySync(): void {
    const mcluster = this.mcluster;
    const rk = this.rk;
    this.mcluster = null;
    this.rk = null;
    try {
      const lib = bindings();
      if (!isNullPointer(mcluster)) lib.mockClusterDestroy(mcluster);
      if (!isNullPointer(rk)) lib.kafkaDestroy(rk);
    } catch {
      // Exiting anyway; nothing sensible left to do.
    }
  }

  private setBrokerState(id: number, up: boolean): void {
    const fn = up ? 'brokerUp' : 'brokerDown';
    const mcluster = this.requireRunning(fn);
    if (!Number.isInteger(id) || id < 1 || id > this.brokerCount) {
      throw new Error(
        `KafkaMockCluster.${fn}: broker id must be in 1..${this.brokerCount}, got ${id}`,
      );
    }
    const lib = bindings();
    const raw = up ? lib.mockBrokerSetUp(mcluster, id) : lib.mockBrokerSetDown(mcluster, id);
    const err = asInt(raw, up ? 'rd_kafka_mock_broker_set_up' : 'rd_kafka_mock_broker_set_down');
    if (err !== RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw new Error(`KafkaMockCluster.${fn}(${id}) failed: ${errName(lib, err)}`);
    }
  }

  private requireRunning(what: string): Pointer {
    if (!this.running) throw new Error(`KafkaMockCluster.${what}: cluster is stopped`);
    return this.mcluster;
  }
}

/**
 * kafkajs round-robin assigner that waits `delayMs` before the group leader sends its
 * SyncGroup. REQUIRED for any consumer group with 2+ kafkajs members on the mock.
 *
 * Why: the mock completes a sync as soon as the leader's SyncGroup carries assignments
 * for every member, flips the group to Up and throws away the followers' assignments. A
 * follower whose SyncGroup arrives after the leader's then gets INVALID_REQUEST, which
 * kafkajs treats as fatal (consumer CRASH, no restart); the group only recovers once that
 * member's session times out and the leader takes every partition. Without this delay
 * that happened in roughly 1 of 10 group formations. Followers send SyncGroup right after
 * their JoinGroup response, so delaying the leader makes them win the race.
 *
 * Keeps the protocol name of kafkajs's RoundRobinAssigner, so it can be mixed with it.
 * Use: `kafka.consumer({ groupId, partitionAssigners: [mockSafePartitionAssigner()] })`.
 */
export function mockSafePartitionAssigner(delayMs = 250): PartitionAssigner {
  return (config) => {
    const inner = PartitionAssigners.roundRobin(config);
    return {
      name: inner.name,
      version: inner.version,
      protocol: (subscription) => inner.protocol(subscription),
      assign: async (group) => {
        await delay(delayMs);
        return inner.assign(group);
      },
    };
  };
}
