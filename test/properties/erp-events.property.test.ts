/**
 * Property: whatever an ERP puts on the order topic, the worker dead-letters what cannot
 * take effect, with a reason, and applies what can; it never restarts and its memory stays
 * bounded. Generated with fast-check from a fixed seed (support/erp-cases.ts lists the
 * families of broken events), 10,000 cases in CI and 1,000 locally (PROPERTY_RUNS,
 * PROPERTY_SEED), published in batches through real Kafka to the worker as a child process
 * (the real dist/src/main.js), with the Payflow sandbox as Payflow.
 *
 * Checked once the consumer group has committed the whole topic (by the contract, every
 * event before a committed offset took effect or is dead-lettered):
 * - every broken event is on the dead-letter topic exactly once, with its original key and
 *   value byte for byte and a reason its family allows, and nothing of it reached Payflow;
 * - every valid event (junk the contract ignores included) took effect exactly once: one
 *   payment at Payflow, one payment.created, no dead letter;
 * - an eventId used again with other content is a redelivery: nothing happens (or, broken,
 *   it is dead-lettered like any broken event);
 * - the worker is the same process throughout, still consumes (a last event takes effect),
 *   answers /health/live, and its RSS stays under a bound without growing from the first
 *   quarter of the run to the last (after a warm-up tenth, while the heap finds its size).
 *
 * The worker runs as a child process, as in the fault tests, so that "never restarted" is
 * one pid and the memory sampled is the worker's own, not the test's generated data.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import { partitionOfKey } from '../../src/messaging/kafka/kafka.producer.js';
import { allSandboxPayments } from '../../testbed/sandbox-pages.js';
import {
  caseIds,
  generateErpCases,
  reusedEventIdCases,
  validPaymentRequestRecipe,
  type ErpCase,
} from './support/erp-cases.js';
import { propertySettings } from './support/settings.js';
import {
  listSome,
  PARTITIONS,
  RssSampler,
  sendBatched,
  sha256,
  startPropertyBed,
  TopicRecorder,
  waitCommittedToEnd,
  type Landed,
  type OutgoingMessage,
  type PropertyBed,
  type RecordedMessage,
} from './support/worker-bed.js';

const { runs, seed } = propertySettings();

/** The worker's resident memory must stay below this (it holds at most MAX_IN_FLIGHT_BYTES). */
const RSS_LIMIT_MB = 400;
/** From the first quarter of the run to the last, RSS may grow by this much at most. */
const RSS_GROWTH_LIMIT_MB = 128;

interface StatusEvent {
  readonly type: string;
  readonly orderId: string;
}

interface SandboxPayment {
  readonly body: { readonly payment: { readonly internalRef?: string } };
}

function outgoing(testCase: ErpCase): OutgoingMessage {
  return {
    key: testCase.key,
    value: testCase.value,
    ...(testCase.headers === undefined ? {} : { headers: testCase.headers }),
    // Keyed events go where the worker's own producer would put them (murmur2, as Java).
    partition:
      testCase.key === null
        ? testCase.index % PARTITIONS
        : partitionOfKey(testCase.key, PARTITIONS),
  };
}

describe(`generated ERP order events (${runs} cases, seed ${seed})`, () => {
  let bed: PropertyBed;
  let rss: RssSampler | undefined;
  let dlq: TopicRecorder;
  let status: TopicRecorder;

  beforeAll(async () => {
    bed = await startPropertyBed('prop_erp');
    [dlq, status] = await Promise.all([
      TopicRecorder.start(bed.kafka, bed.topics.dlq, false),
      TopicRecorder.start(bed.kafka, bed.topics.status, true),
    ]);
  }, 240_000);

  afterAll(async () => {
    await rss?.stop();
    await Promise.allSettled([dlq?.stop(), status?.stop()]);
    await bed?.stop();
  }, 120_000);

  it('dead-letters every broken event with a reason, applies every valid one, and keeps running', async () => {
    const startedAt = performance.now();
    const pid = bed.worker.pid;
    const sampler = new RssSampler(bed.worker);
    rss = sampler;

    // 1. The generated cases, in one stream of batches; the first tenth warms the worker
    //    up (its heap grows to working size) before memory is compared.
    const cases = generateErpCases(runs, seed);
    const warmUp = Math.max(300, Math.floor(cases.length / 10));
    const landed = await sendBatched(
      bed.producer,
      bed.topics.orders,
      cases.slice(0, warmUp).map(outgoing),
    );
    await waitCommittedToEnd(bed.kafka, bed.groupId, bed.topics.orders, 120_000);
    sampler.warmedUp();
    landed.push(
      ...(await sendBatched(bed.producer, bed.topics.orders, cases.slice(warmUp).map(outgoing))),
    );
    await waitCommittedToEnd(bed.kafka, bed.groupId, bed.topics.orders, 300_000);
    const firstPassMs = performance.now() - startedAt;

    // 2. eventIds used again, once the events that first had them took effect.
    const applied = cases.filter((testCase) => testCase.expect.outcome === 'applied');
    const reused = reusedEventIdCases(
      applied.slice(0, Math.max(30, Math.ceil(applied.length / 10))),
      seed,
      cases.length,
    );
    landed.push(...(await sendBatched(bed.producer, bed.topics.orders, reused.map(outgoing))));
    await waitCommittedToEnd(bed.kafka, bed.groupId, bed.topics.orders, 120_000);

    // 3. Still consuming: one more valid event takes effect.
    const [probeRecipe] = fc.sample(validPaymentRequestRecipe(), { numRuns: 1, seed: seed + 2 });
    if (probeRecipe === undefined) throw new Error('no probe event generated');
    const probe = probeRecipe(caseIds(seed, cases.length + reused.length, 'PROBE'));
    await sendBatched(bed.producer, bed.topics.orders, [outgoing(probe)]);
    await status.waitFor(
      () => status.json<StatusEvent>().some((event) => event.orderId === probe.orderId),
      60_000,
      'the probe event to take effect',
    );
    const memory = await sampler.stop();
    // For a failure's diagnosis: the RSS curve beside the worker's log.
    writeFileSync(`${bed.logFile}.rss.json`, JSON.stringify(sampler.samples));

    const all = [...cases, ...reused];
    const expectedLetters = all.filter((c) => c.expect.outcome === 'dead_letter').length;
    // The outbox publishes them shortly after the commit; a missing one is named below.
    await dlq.until(() => dlq.messages.length >= expectedLetters, 30_000);
    // Anything late (a letter too many, a second status event) shows within this pause.
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const failures = verify(all, landed, {
      letters: lettersByOrigin(dlq.messages, bed.topics.orders),
      statusEvents: countBy(
        status.json<StatusEvent>().filter((event) => event.type === 'payment.created'),
        (event) => event.orderId,
      ),
      payments: countBy(
        await allSandboxPayments<SandboxPayment>(bed.sandbox.url),
        (payment) => payment.body.payment.internalRef ?? '',
      ),
    });

    const live = await bed.worker.get('/health/live');
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
    process.stdout.write(
      `erp-events property: ${all.length} cases (${applied.length} valid) in ${seconds} s ` +
        `(first pass ${(firstPassMs / 1000).toFixed(1)} s); worker RSS peak ${memory.peakMb.toFixed(0)} MB, ` +
        `first quarter ${memory.firstQuarterMb.toFixed(0)} MB, last quarter ${memory.lastQuarterMb.toFixed(0)} MB\n`,
    );

    if (failures.length > 0) {
      throw new Error(
        `${failures.length} of ${all.length} generated events were not handled as the contract says (seed ${seed}, ${runs} runs; worker log ${bed.logFile}):\n${listSome(failures, 25)}`,
      );
    }
    expect({
      samePid: bed.worker.pid === pid,
      alive: bed.worker.alive,
      live: live.status,
      fatal: bed.worker.fatalCount,
    }).toEqual({ samePid: true, alive: true, live: 200, fatal: 0 });
    expect(memory.samples).toBeGreaterThan(4);
    expect(memory.peakMb).toBeLessThan(RSS_LIMIT_MB);
    expect(memory.lastQuarterMb - memory.firstQuarterMb).toBeLessThan(RSS_GROWTH_LIMIT_MB);
  }, 900_000);
});

interface Observed {
  /** Dead letters by `partition:offset` of the original event. */
  readonly letters: ReadonlyMap<string, RecordedMessage[]>;
  /** payment.created events per orderId. */
  readonly statusEvents: ReadonlyMap<string, number>;
  /** Payments at Payflow per internalRef (= orderId). */
  readonly payments: ReadonlyMap<string, number>;
}

/** One line per case the worker did not handle as expected. */
function verify(cases: readonly ErpCase[], landed: readonly Landed[], seen: Observed): string[] {
  const failures: string[] = [];
  cases.forEach((testCase, position) => {
    const at = landed[position];
    if (at === undefined) {
      failures.push(failureLine(testCase, 'was never published'));
      return;
    }
    const letters = seen.letters.get(`${at.partition}:${at.offset}`) ?? [];
    const payments = seen.payments.get(testCase.orderId) ?? 0;
    const created = seen.statusEvents.get(testCase.orderId) ?? 0;
    const problem = (text: string) => failures.push(failureLine(testCase, text));
    const expectation = testCase.expect;
    switch (expectation.outcome) {
      case 'dead_letter': {
        if (letters.length !== 1) {
          problem(`expected one dead letter, found ${letters.length} (payments ${payments})`);
          return;
        }
        const [letter] = letters;
        if (letter === undefined) return;
        const reason = letter.headers['x-dlq-reason'] ?? '';
        if (!(expectation.reasons as readonly string[]).includes(reason)) {
          problem(
            `dead-lettered as ${reason}, expected ${expectation.reasons.join(' or ')}: ${letter.headers['x-dlq-error'] ?? ''}`,
          );
        }
        if ((letter.headers['x-dlq-error'] ?? '').trim() === '') problem('x-dlq-error is empty');
        if (!sameBytes(letter.key, testCase.key)) problem('the dead letter changed the key');
        if (letter.valueSha256 !== sha256(testCase.value))
          problem('the dead letter changed the value');
        if (payments > 0 || created > 0) {
          problem(`reached Payflow anyway: ${payments} payments, ${created} payment.created`);
        }
        return;
      }
      case 'applied':
        if (letters.length > 0) {
          problem(
            `dead-lettered as ${letters.map((l) => l.headers['x-dlq-reason']).join(', ')}: ${letters[0]?.headers['x-dlq-error'] ?? ''}`,
          );
        }
        if (payments !== 1 || created !== 1) {
          problem(`expected 1 payment and 1 payment.created, found ${payments} and ${created}`);
        }
        return;
      case 'duplicate':
        if (letters.length > 0) {
          problem(`dead-lettered as ${letters[0]?.headers['x-dlq-reason'] ?? ''}`);
        }
        if (testCase.orderId !== expectation.of && (payments > 0 || created > 0)) {
          problem(`took effect again: ${payments} payments, ${created} payment.created`);
        }
        if ((seen.payments.get(expectation.of) ?? 0) !== 1) {
          problem(`the original order has ${seen.payments.get(expectation.of) ?? 0} payments`);
        }
        if ((seen.statusEvents.get(expectation.of) ?? 0) !== 1) {
          problem(
            `the original order has ${seen.statusEvents.get(expectation.of) ?? 0} payment.created`,
          );
        }
        return;
    }
  });
  return failures;
}

function failureLine(testCase: ErpCase, problem: string): string {
  return `#${testCase.index} ${testCase.kind} (${testCase.type}): ${testCase.detail} → ${problem}`;
}

function lettersByOrigin(
  messages: readonly RecordedMessage[],
  topic: string,
): Map<string, RecordedMessage[]> {
  const byOrigin = new Map<string, RecordedMessage[]>();
  for (const message of messages) {
    if (message.headers['x-dlq-original-topic'] !== topic) continue;
    const origin = `${message.headers['x-dlq-original-partition']}:${message.headers['x-dlq-original-offset']}`;
    const list = byOrigin.get(origin) ?? [];
    list.push(message);
    byOrigin.set(origin, list);
  }
  return byOrigin;
}

function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + 1);
  return counts;
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  if (a === null || b === null) return a === b;
  return a.equals(b);
}
