import {
  assertTopicsExist,
  createMissingTopics,
  describeTopicOutcome,
  requiredTopics,
  topicSpecs,
  TopicsMissingError,
  type TopicAdmin,
  type TopicDescription,
  type TopicSpec,
} from './topics.port.js';

const CONFIG = {
  TOPIC_ORDERS: 'erp.orders.v1',
  TOPIC_PAYMENT_STATUS: 'payflow.payment-status.v1',
  TOPIC_SETTLEMENTS: 'payflow.settlements.v1',
};

/** A cluster in memory; `raceOn` makes create() find a topic someone else just made. */
class MemoryAdmin implements TopicAdmin {
  readonly topics = new Map<string, TopicDescription>();
  readonly createdSpecs: TopicSpec[] = [];
  constructor(readonly raceOn: string | null = null) {}
  /** A topic that exists already (replication factor 1). */
  holding(name: string, partitions = 1): this {
    this.topics.set(name, { name, partitions, replicationFactor: 1 });
    return this;
  }
  describe(names: readonly string[]): Promise<readonly TopicDescription[]> {
    return Promise.resolve(names.flatMap((name) => this.topics.get(name) ?? []));
  }
  brokerCount(): Promise<number> {
    return Promise.resolve(1);
  }
  create(specs: readonly TopicSpec[]): Promise<ReadonlyMap<string, boolean>> {
    const result = new Map<string, boolean>();
    for (const spec of specs) {
      this.topics.set(spec.name, spec);
      this.createdSpecs.push(spec);
      result.set(spec.name, spec.name !== this.raceOn);
    }
    return Promise.resolve(result);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('topics', () => {
  it('requires the input, its dead-letter topic and both outputs', () => {
    expect(requiredTopics(CONFIG)).toEqual([
      'erp.orders.v1',
      'erp.orders.v1.dlq',
      'payflow.payment-status.v1',
      'payflow.settlements.v1',
    ]);
  });

  it('names every missing topic, one line each', async () => {
    const admin = new MemoryAdmin().holding('erp.orders.v1');
    const error = await assertTopicsExist(admin, requiredTopics(CONFIG)).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TopicsMissingError);
    const missing = error as TopicsMissingError;
    expect(missing.code).toBe('kafka.topics_missing');
    expect(missing.topics).toEqual([
      'erp.orders.v1.dlq',
      'payflow.payment-status.v1',
      'payflow.settlements.v1',
    ]);
    expect(missing.lines()[0]).toBe(
      'topic erp.orders.v1.dlq does not exist (create it: npx payflow-bridge topics create)',
    );
  });

  it('creates only what is missing, with room for large documents on the input and DLQ', async () => {
    const admin = new MemoryAdmin().holding('payflow.settlements.v1', 6);
    const outcomes = await createMissingTopics(
      admin,
      topicSpecs(CONFIG, { partitions: 12, replicationFactor: 3 }),
    );
    expect(outcomes.map(describeTopicOutcome)).toEqual([
      'created erp.orders.v1 (12 partitions, replication factor 3)',
      'created erp.orders.v1.dlq (12 partitions, replication factor 3)',
      'created payflow.payment-status.v1 (12 partitions, replication factor 3)',
      'exists payflow.settlements.v1 (6 partitions, replication factor 1)',
    ]);
    expect(admin.createdSpecs.map((spec) => spec.config['max.message.bytes'])).toEqual([
      '16777216',
      '16777216',
      undefined,
    ]);
  });

  it('keeps the dead letters (whole ERP events) no longer than RETENTION_PERSONAL_DATA', () => {
    const ninetyDays = 90 * 86_400_000;
    const specs = topicSpecs(
      { ...CONFIG, RETENTION_PERSONAL_DATA: ninetyDays },
      { partitions: 1, replicationFactor: 1 },
    );
    expect(specs.map((spec) => spec.config['retention.ms'])).toEqual([
      undefined,
      String(ninetyDays),
      undefined,
      undefined,
    ]);
    expect(specs[1]?.config['max.message.bytes']).toBe('16777216');
  });

  it('says exists for a topic another process created meanwhile', async () => {
    const admin = new MemoryAdmin('erp.orders.v1.dlq');
    const outcomes = await createMissingTopics(
      admin,
      topicSpecs(CONFIG, { partitions: 1, replicationFactor: 1 }),
    );
    expect(outcomes.map((outcome) => outcome.action)).toEqual([
      'created',
      'exists',
      'created',
      'created',
    ]);
    expect(describeTopicOutcome(outcomes[0]!)).toBe(
      'created erp.orders.v1 (1 partition, replication factor 1)',
    );
  });
});
