/**
 * An ACL withdrawn while the worker runs loses nothing (issue 18, part 1): on the secured test
 * bed, a worker holding exactly its least privilege (CONTRACT §9) takes orders under load
 * while, one at a time, an operation it needs is revoked and later restored:
 *
 * 1. WRITE on the payment-status topic: the status events wait in the outbox, /health/ready
 *    names the topic and the operation; restored, every event goes out once, in order per
 *    order, and readiness clears.
 * 2. READ on the orders topic, then READ on the consumer group: the consumer waits (no crash,
 *    no exit) and, READ given back, resumes by itself from the committed offsets: every
 *    order is handled once, none skipped.
 * 3. WRITE on the dead-letter topic while an invalid event arrives: the dead letter waits
 *    (stored, not lost) while the status events go on; restored, it appears once.
 *
 * One worker process for the whole file (never restarted), one warning when each denial
 * starts and one info line when it ends.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import type { KafkaAcl } from '../../src/messaging/security/kafka-acls.js';
import { silentLogger } from '../../src/logging/logger.js';
import {
  KafkaAuthorizationError,
  KafkaAuthorizationStatus,
} from '../../src/messaging/security/kafka-authorization.js';
import { kafkaClientOptionsFromConfig } from '../../src/messaging/kafka/kafka.client.js';
import { KafkaMessageProducer } from '../../src/messaging/kafka/kafka.producer.js';
import { InboundEventsTransport } from '../../src/messaging/transport/inbound-events.transport.js';
import { anEnvelope, anOrderId, cancelledData, paymentRequestedData } from '../support/builders.js';
import type { TopicReader } from '../support/pipeline.js';
import { startSecuredPipeline, type SecuredPipeline } from '../support/secured-pipeline.js';

jest.setTimeout(300_000);

interface StatusEvent {
  readonly eventId: string;
  readonly type: string;
  readonly orderId: string;
}

interface Denied {
  readonly resource: string;
  readonly name: string;
  readonly operation: string;
  readonly since: string;
}

interface Readiness {
  readonly status: number;
  readonly body: {
    readonly status?: string;
    readonly details?: Readonly<
      Record<string, { readonly status: string; readonly denied?: readonly Denied[] }>
    >;
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await sleep(250);
  }
}

let pipeline: SecuredPipeline;
let status: TopicReader;
let dlq: TopicReader;
let db: pg.Client;
const crashes: Error[] = [];

beforeAll(async () => {
  pipeline = await startSecuredPipeline('acl', { env: { SETTLEMENT_ENABLED: 'false' } });
  pipeline.worker.onCrash((error) => crashes.push(error));
  [status, dlq] = await Promise.all([
    pipeline.read(pipeline.topics.status),
    pipeline.read(pipeline.topics.dlq),
  ]);
  db = new pg.Client({ connectionString: pipeline.database.url });
  await db.connect();
}, 240_000);

afterAll(async () => {
  await db?.end();
  await pipeline?.stop();
});

async function readiness(): Promise<Readiness> {
  const response = await fetch(`${pipeline.worker.managementUrl}/health/ready`);
  return { status: response.status, body: (await response.json()) as Readiness['body'] };
}

/** Readiness is 503 and names exactly this denial; returns the denial as it lists it. */
async function waitForDenial(resource: string, name: string, operation: string): Promise<Denied> {
  let found: Denied | undefined;
  await waitUntil(`/health/ready names ${operation} on ${resource} ${name}`, async () => {
    const { status: code, body } = await readiness();
    const section = body.details?.['kafkaAuthorization'];
    found = section?.denied?.find(
      (d) => d.resource === resource && d.name === name && d.operation === operation,
    );
    return code === 503 && section?.status === 'down' && found !== undefined;
  });
  if (found === undefined) throw new Error('unreachable');
  return found;
}

async function waitForReady(): Promise<Readiness> {
  let last: Readiness | undefined;
  await waitUntil('/health/ready answers 200 again', async () => {
    last = await readiness();
    return last.status === 200;
  });
  if (last === undefined) throw new Error('unreachable');
  return last;
}

/** `count` orders with a payment request each; every `cancelEvery`-th is cancelled after it. */
function orders(count: number, cancelEvery = 0) {
  const messages: { key: string; value: unknown }[] = [];
  const expected = new Map<string, string[]>();
  for (let i = 0; i < count; i++) {
    const orderId = anOrderId('ACL');
    messages.push({
      key: orderId,
      value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
    });
    const types = ['payment.created'];
    if (cancelEvery > 0 && i % cancelEvery === 0) {
      messages.push({
        key: orderId,
        value: anEnvelope('order.cancelled', cancelledData(), { orderId }),
      });
      types.push('payment.cancelled');
    }
    expected.set(orderId, types);
  }
  return { messages, expected, keys: [...expected.keys()] };
}

async function publishInChunks(messages: readonly { key: string; value: unknown }[], size = 40) {
  for (let start = 0; start < messages.length; start += size) {
    await pipeline.publish(messages.slice(start, start + size));
  }
}

/** Status events of these orders read so far, per order, in the order they were read. */
function statusOf(keys: readonly string[]): Map<string, StatusEvent[]> {
  const wanted = new Set(keys);
  const byOrder = new Map<string, StatusEvent[]>();
  for (const event of status.json<StatusEvent>()) {
    if (!wanted.has(event.orderId)) continue;
    byOrder.set(event.orderId, [...(byOrder.get(event.orderId) ?? []), event]);
  }
  return byOrder;
}

function statusCount(keys: readonly string[]): number {
  let count = 0;
  for (const events of statusOf(keys).values()) count += events.length;
  return count;
}

/** Every expected status event out, each once, in order per order (no gap, no duplicate). */
async function expectAllStatusEventsOnce(expected: ReadonlyMap<string, readonly string[]>) {
  const keys = [...expected.keys()];
  const total = [...expected.values()].reduce((sum, types) => sum + types.length, 0);
  await status.waitFor(() => statusCount(keys) >= total, 180_000);
  // A little longer: a duplicate would come now.
  await sleep(2_000);
  const byOrder = statusOf(keys);
  for (const [orderId, types] of expected) {
    expect({ orderId, types: (byOrder.get(orderId) ?? []).map((e) => e.type) }).toEqual({
      orderId,
      types,
    });
  }
  const eventIds = [...byOrder.values()].flat().map((e) => e.eventId);
  expect(new Set(eventIds).size).toBe(total);
}

async function processedCount(keys: readonly string[]): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM processed_events WHERE order_id = ANY($1::text[])`,
    [keys],
  );
  return rows[0]?.n ?? 0;
}

async function pendingOutbox(topic: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox WHERE topic = $1 AND published_at IS NULL`,
    [topic],
  );
  return rows[0]?.n ?? 0;
}

/** The worker's log lines about this access: [warnings when denied, infos when permitted]. */
function denialLines(acl: KafkaAcl): [number, number] {
  const about = (line: Record<string, unknown>) =>
    line['resource'] === acl.resourceType &&
    line['name'] === acl.resourceName &&
    line['operation'] === acl.operation;
  const lines = pipeline.logs.filter(about);
  return [
    lines.filter((line) => line.level === 40 && /^Kafka denies/.test(line.msg ?? '')).length,
    lines.filter((line) => line.level === 30 && /^Kafka permits/.test(line.msg ?? '')).length,
  ];
}

function expectNoRestart(): void {
  expect(crashes).toEqual([]);
  expect(pipeline.worker.app.get(InboundEventsTransport).currentStatus).toBe('connected');
}

describe('an ACL withdrawn while running loses nothing', () => {
  it('starts ready with exactly the least privilege', async () => {
    expect(await pipeline.kafka.aclsOf(pipeline.principal)).toHaveLength(pipeline.acls.length);
    const warmUp = orders(5);
    await pipeline.publish(warmUp.messages);
    await expectAllStatusEventsOnce(warmUp.expected);
    const { body } = await waitForReady();
    expect(body.details?.['kafkaAuthorization']).toEqual({ status: 'up' });
  });

  it('WRITE on the status topic withdrawn: events wait, readiness names it, all go out once restored', async () => {
    const { topics } = pipeline;
    const write = pipeline.acl('topic', topics.status, 'WRITE');
    const before = orders(120, 10);
    const during = orders(120, 10);
    await publishInChunks(before.messages);
    // Mid-run: some of the first orders' events are out, most are not.
    await status.waitFor(() => statusCount(before.keys) >= 10, 120_000);
    await pipeline.kafka.revokeAcl(pipeline.principal, write);
    try {
      await publishInChunks(during.messages);
      const denial = await waitForDenial('topic', topics.status, 'WRITE');
      expect(Number.isNaN(Date.parse(denial.since))).toBe(false);
      // Every order is handled meanwhile; its status events wait in the outbox.
      const all = [...before.keys, ...during.keys];
      const events = before.messages.length + during.messages.length;
      await waitUntil('every order handled', async () => (await processedCount(all)) === events);
      await sleep(3_000);
      const out = statusCount(all);
      const held = await pendingOutbox(topics.status);
      expect(held).toBeGreaterThan(0);
      expect(out + held).toBe(events);
      await sleep(3_000);
      expect(statusCount(all)).toBe(out);
      expect((await readiness()).status).toBe(503);
    } finally {
      await pipeline.kafka.restoreAcl(pipeline.principal, write);
    }
    await expectAllStatusEventsOnce(new Map([...before.expected, ...during.expected]));
    expect(await pendingOutbox(topics.status)).toBe(0);
    const { body } = await waitForReady();
    expect(body.details?.['kafkaAuthorization']).toEqual({ status: 'up' });
    expect(denialLines(write)).toEqual([1, 1]);
    expectNoRestart();
  });

  it.each([
    ['the orders topic', 'topic' as const],
    ['the consumer group', 'group' as const],
  ])(
    'READ on %s withdrawn: the consumer waits, resumes by itself once restored, skips nothing',
    async (_what, resource) => {
      const name = resource === 'topic' ? pipeline.topics.orders : pipeline.groupId;
      const read = pipeline.acl(resource, name, 'READ');
      const held = orders(80, 8);
      await pipeline.kafka.revokeAcl(pipeline.principal, read);
      try {
        await publishInChunks(held.messages);
        await waitForDenial(resource, name, 'READ');
        const committed = await pipeline.committedOffsets();
        await sleep(3_000);
        // Nothing is committed meanwhile (OffsetCommit needs READ on both).
        expect(await pipeline.committedOffsets()).toBe(committed);
        if (resource === 'topic') {
          // The events wait in Kafka (at most a fetch already under way took a few). Without
          // READ on the group the consumer may still fetch what it can until its heartbeat
          // is refused, but commits nothing.
          expect(await processedCount(held.keys)).toBeLessThan(held.messages.length);
        }
        expect((await readiness()).status).toBe(503);
      } finally {
        await pipeline.kafka.restoreAcl(pipeline.principal, read);
      }
      await expectAllStatusEventsOnce(held.expected);
      expect(await processedCount(held.keys)).toBe(held.messages.length);
      // No offset skipped, none left behind: the group commits up to the end of the topic.
      const end = await pipeline.endOffsets(pipeline.topics.orders);
      await waitUntil('the group committed every offset', async () => {
        return (await pipeline.committedOffsets()) === end;
      });
      const { body } = await waitForReady();
      expect(body.details?.['kafkaAuthorization']).toEqual({ status: 'up' });
      expect(denialLines(read)).toEqual([1, 1]);
      expectNoRestart();
    },
  );

  it('WRITE on the dead-letter topic withdrawn while an invalid event arrives: the letter waits, then appears once', async () => {
    const { topics } = pipeline;
    const write = pipeline.acl('topic', topics.dlq, 'WRITE');
    const invalid = anOrderId('BAD');
    const valid = orders(40);
    await pipeline.kafka.revokeAcl(pipeline.principal, write);
    try {
      await pipeline.publish([{ key: invalid, value: '{"eventId": nope' }]);
      await publishInChunks(valid.messages);
      await waitForDenial('topic', topics.dlq, 'WRITE');
      // Stored and on its way (the offset may be committed past it: nothing is lost).
      const { rows } = await db.query<{ reason: string }>(
        `SELECT reason FROM dead_letters WHERE order_id = $1`,
        [invalid],
      );
      expect(rows).toEqual([{ reason: 'invalid_json' }]);
      // The other topics go on meanwhile.
      await expectAllStatusEventsOnce(valid.expected);
      expect(await pendingOutbox(topics.dlq)).toBe(1);
      expect(dlq.messages.filter((m) => m.key === invalid)).toHaveLength(0);
      expect((await readiness()).status).toBe(503);
    } finally {
      await pipeline.kafka.restoreAcl(pipeline.principal, write);
    }
    await dlq.waitFor((messages) => messages.some((m) => m.key === invalid), 120_000);
    await sleep(3_000);
    const letters = dlq.messages.filter((m) => m.key === invalid);
    expect(letters).toHaveLength(1);
    expect(letters[0]?.headers['x-dlq-reason']).toBe('invalid_json');
    expect(letters[0]?.value).toBe('{"eventId": nope');
    expect(await pendingOutbox(topics.dlq)).toBe(0);
    await waitForReady();
    expect(denialLines(write)).toEqual([1, 1]);
    expectNoRestart();
  });

  it('counts each denial once in the metrics', async () => {
    const metrics = await (await fetch(`${pipeline.worker.managementUrl}/metrics`)).text();
    /** The value of `metric` with exactly these labels (in any order). */
    const valueOf = (metric: string, labels: Record<string, string>): string | undefined => {
      const wanted = Object.entries(labels).sort().join();
      for (const line of metrics.split('\n')) {
        const match = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
        if (match?.[1] !== metric) continue;
        const found: [string, string][] = [];
        for (const label of (match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) {
          found.push([label[1] ?? '', label[2] ?? '']);
        }
        if (found.sort().join() === wanted) return match[3];
      }
      return undefined;
    };
    const { topics, groupId } = pipeline;
    for (const [resource, name, operation] of [
      ['topic', topics.status, 'WRITE'],
      ['topic', topics.orders, 'READ'],
      ['group', groupId, 'READ'],
      ['topic', topics.dlq, 'WRITE'],
    ] as const) {
      const labels = { resource, name, operation };
      expect(valueOf('payflow_bridge_kafka_authorization_denials_total', labels)).toBe('1');
      expect(valueOf('payflow_bridge_kafka_authorization_denied', labels)).toBe('0');
    }
  });

  it('the idempotent producer gets its producer id once WRITE is back, without a restart', async () => {
    // InitProducerId needs IDEMPOTENT_WRITE on the cluster or WRITE on any topic: with every
    // WRITE withdrawn it is refused, as it would be for a producer replaced meanwhile.
    const { topics } = pipeline;
    const writes = [topics.status, topics.dlq, topics.settlements].map((topic) =>
      pipeline.acl('topic', topic, 'WRITE'),
    );
    for (const write of writes) await pipeline.kafka.revokeAcl(pipeline.principal, write);
    let restored = false;
    const restore = async (): Promise<void> => {
      if (restored) return;
      restored = true;
      for (const write of writes) await pipeline.kafka.restoreAcl(pipeline.principal, write);
    };
    const authorization = new KafkaAuthorizationStatus(silentLogger());
    const producer = new KafkaMessageProducer(kafkaClientOptionsFromConfig(pipeline.config), {
      authorization,
    });
    try {
      const refused = await producer.connect().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(KafkaAuthorizationError);
      expect(authorization.denials()).toEqual([
        expect.objectContaining({
          resource: 'cluster',
          name: 'kafka-cluster',
          operation: 'IDEMPOTENT_WRITE',
        }),
      ]);
      const before = await pipeline.endOffsets(topics.settlements);
      // To the settlements topic, which nothing else writes here (the nightly run is off).
      const message = { topic: topics.settlements, key: anOrderId('PID'), value: '{}' };
      await expect(producer.send([message])).rejects.toBeInstanceOf(KafkaAuthorizationError);

      await restore();
      await producer.send([message]);
      expect(authorization.denials()).toEqual([]);
      expect(await pipeline.endOffsets(topics.settlements)).toBe(before + 1);
    } finally {
      await restore();
      await producer.disconnect().catch(() => undefined);
    }
  });
});
