import { describe, expect, it } from '@jest/globals';
import {
  asAuthorizationError,
  deniedResourceOf,
  KafkaAuthorizationError,
  KafkaAuthorizationStatus,
  withKafkaDenialsAtDebug,
  type KafkaAccess,
  type KafkaAuthorizationMetrics,
} from './kafka-authorization.js';
import { classifyFailure, decideClientStop } from '../transport/failure-policy.js';
import { capturingLogger } from '../../../test/support/capturing-logger.js';

const WARN = 40;
const INFO = 30;
const DEBUG = 20;

/** kafkajs' error of a broker answer, e.g. `{ type: 'TOPIC_AUTHORIZATION_FAILED', code: 29 }`. */
const protocolError = (type: string, message = `${type} (kafkajs)`): Error =>
  Object.assign(new Error(message), { name: 'KafkaJSProtocolError', type, retriable: false });

const statusWrite: KafkaAccess = {
  resource: 'topic',
  name: 'payflow.payment-status.v1',
  operation: 'WRITE',
};

describe('deniedResourceOf', () => {
  it.each([
    ['TOPIC_AUTHORIZATION_FAILED', 'topic'],
    ['GROUP_AUTHORIZATION_FAILED', 'group'],
    ['CLUSTER_AUTHORIZATION_FAILED', 'cluster'],
    ['TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'transactional_id'],
  ])('reads %s as a denial on a %s', (type, resource) => {
    expect(deniedResourceOf(protocolError(type))).toBe(resource);
  });

  it('finds the broker answer inside the errors kafkajs wraps it in', () => {
    const crash = Object.assign(new Error('Not authorized to access group'), {
      name: 'KafkaJSNonRetriableError',
      cause: protocolError('GROUP_AUTHORIZATION_FAILED'),
    });
    const exhausted = Object.assign(new Error('retries exhausted'), {
      originalError: crash,
    });
    expect(deniedResourceOf(exhausted)).toBe('group');
  });

  it.each([
    ['another broker answer', protocolError('NOT_LEADER_FOR_PARTITION')],
    ['a connection error', Object.assign(new Error('ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['a non-error', 'TOPIC_AUTHORIZATION_FAILED'],
  ])('is undefined for %s', (_what, error) => {
    expect(deniedResourceOf(error)).toBeUndefined();
  });
});

describe('asAuthorizationError', () => {
  it('names what was attempted, with the broker answer as cause and in the metadata', () => {
    const answer = protocolError('TOPIC_AUTHORIZATION_FAILED');
    const denied = asAuthorizationError(answer, (resource) => ({
      resource,
      name: 'payflow.payment-status.v1',
      operation: 'WRITE',
    }));
    expect(denied).toBeInstanceOf(KafkaAuthorizationError);
    expect(denied?.access).toEqual(statusWrite);
    expect(denied?.cause).toBe(answer);
    expect(denied?.toJSON()).toMatchObject({
      code: 'kafka.authorization_failed',
      transient: true,
      metadata: { resource: 'topic', name: 'payflow.payment-status.v1', operation: 'WRITE' },
    });
    expect(denied?.message).toBe('Kafka denied WRITE on topic payflow.payment-status.v1');
  });

  it('leaves other errors alone, and an authorization error as it is', () => {
    const attempted = (): KafkaAccess => statusWrite;
    expect(asAuthorizationError(protocolError('REQUEST_TIMED_OUT'), attempted)).toBeUndefined();
    const already = new KafkaAuthorizationError(statusWrite, undefined);
    expect(asAuthorizationError(already, attempted)).toBe(already);
  });
});

describe('the failure policy of a denial', () => {
  it('waits it out: a stopped client restarts, an event that met one is retried', () => {
    const denied = new KafkaAuthorizationError(
      statusWrite,
      protocolError('TOPIC_AUTHORIZATION_FAILED'),
    );
    expect(decideClientStop(denied)).toBe('restart_after_backoff');
    expect(classifyFailure(denied)).toEqual({
      kind: 'retry',
      cause: 'transient',
      retryAfterMs: undefined,
      spendsAttempt: true,
    });
  });

  it('still gives up on what kafkajs does not retry and is not a denial', () => {
    expect(decideClientStop(protocolError('INVALID_REPLICATION_FACTOR'))).toBe('give_up');
    expect(decideClientStop(new Error('bug'))).toBe('give_up');
  });
});

describe('KafkaAuthorizationStatus', () => {
  const clock = (start = Date.parse('2026-05-01T10:00:00.000Z')) => {
    let now = start;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };
  const recordingMetrics = () => {
    const calls: string[] = [];
    const metrics: KafkaAuthorizationMetrics = {
      kafkaAuthorizationDenied: (access) => calls.push(`denied ${access.name} ${access.operation}`),
      kafkaAuthorizationDeniedNow: (access, denied) =>
        calls.push(`now ${access.name} ${access.operation} ${String(denied)}`),
    };
    return { calls, metrics };
  };

  it('lists a denial with its start until the operation succeeds again', () => {
    const { logger } = capturingLogger();
    const time = clock();
    const status = new KafkaAuthorizationStatus(logger, undefined, time.now);
    expect(status.allPermitted).toBe(true);
    status.denied(statusWrite, protocolError('TOPIC_AUTHORIZATION_FAILED'));
    time.advance(5_000);
    status.denied(statusWrite);
    expect(status.allPermitted).toBe(false);
    expect(status.denials()).toEqual([
      {
        ...statusWrite,
        since: '2026-05-01T10:00:00.000Z',
        lastDeniedAt: '2026-05-01T10:00:05.000Z',
        attempts: 2,
      },
    ]);
    status.permitted(statusWrite);
    expect(status.denials()).toEqual([]);
    expect(status.allPermitted).toBe(true);
  });

  it('keeps denials of different resources and operations apart, oldest first', () => {
    const time = clock();
    const status = new KafkaAuthorizationStatus(capturingLogger().logger, undefined, time.now);
    const groupRead: KafkaAccess = { resource: 'group', name: 'payflow-bridge', operation: 'READ' };
    const statusDescribe: KafkaAccess = { ...statusWrite, operation: 'DESCRIBE' };
    status.denied(groupRead);
    time.advance(10);
    status.denied(statusWrite);
    time.advance(10);
    status.denied(statusDescribe);
    // Permitted: a READ on the group says nothing about WRITE on a topic.
    status.permitted({ ...groupRead, operation: 'DESCRIBE' });
    status.permitted(statusWrite);
    expect(status.denials().map((d) => `${d.resource} ${d.name} ${d.operation}`)).toEqual([
      'group payflow-bridge READ',
      'topic payflow.payment-status.v1 DESCRIBE',
    ]);
  });

  it('logs one warning when a denial starts and one info line when it ends, not one per retry', () => {
    const { logger, lines } = capturingLogger();
    const time = clock();
    const status = new KafkaAuthorizationStatus(logger, undefined, time.now);
    for (let retry = 0; retry < 5; retry++) {
      status.denied(statusWrite, protocolError('TOPIC_AUTHORIZATION_FAILED'));
      time.advance(1_000);
    }
    status.permitted(statusWrite);
    status.permitted(statusWrite);
    expect(lines.map((line) => line.level)).toEqual([WARN, INFO]);
    expect(lines[0]).toMatchObject({
      resource: 'topic',
      name: 'payflow.payment-status.v1',
      operation: 'WRITE',
      error: expect.stringContaining('TOPIC_AUTHORIZATION_FAILED'),
    });
    expect(String(lines[0]?.msg)).toMatch(/denies WRITE on topic payflow.payment-status.v1/);
    expect(lines[1]).toMatchObject({ operation: 'WRITE', deniedForMs: 5_000, attempts: 5 });
  });

  it('counts each denial once and says while it is denied', () => {
    const { calls, metrics } = recordingMetrics();
    const status = new KafkaAuthorizationStatus(capturingLogger().logger, metrics);
    status.denied(statusWrite);
    status.denied(statusWrite);
    status.permitted(statusWrite);
    status.permitted(statusWrite);
    status.denied(statusWrite);
    expect(calls).toEqual([
      'denied payflow.payment-status.v1 WRITE',
      'now payflow.payment-status.v1 WRITE true',
      'now payflow.payment-status.v1 WRITE false',
      'denied payflow.payment-status.v1 WRITE',
      'now payflow.payment-status.v1 WRITE true',
    ]);
  });
});

describe('withKafkaDenialsAtDebug', () => {
  it("logs kafkajs' lines about a denial at debug, every other line as it was", () => {
    const { logger, lines } = capturingLogger();
    const quiet = withKafkaDenialsAtDebug(logger);
    // kafka.client.ts logs kafkajs' entries as (fields, message).
    quiet.error(
      { kafkajs: 'Consumer' },
      'Crash: KafkaJSNonRetriableError: Not authorized to access group: Group authorization failed',
    );
    quiet.warn(
      {
        kafkajs: 'Connection',
        error: 'Not authorized to access topics: [Topic authorization failed]',
      },
      'Response Produce(key: 0, version: 7)',
    );
    quiet.error({ kafkajs: 'Producer' }, 'Cluster authorization failed');
    quiet.error({ kafkajs: 'Consumer' }, 'Crash: KafkaJSConnectionError: Connection timeout');
    quiet.warn({ kafkajs: 'Connection', error: 'The group is rebalancing' }, 'Response Heartbeat');
    quiet.info('connected');
    expect(lines.map((line) => line.level)).toEqual([DEBUG, DEBUG, DEBUG, 50, WARN, INFO]);
    expect(lines.map((line) => line.msg)).toEqual([
      'Crash: KafkaJSNonRetriableError: Not authorized to access group: Group authorization failed',
      'Response Produce(key: 0, version: 7)',
      'Cluster authorization failed',
      'Crash: KafkaJSConnectionError: Connection timeout',
      'Response Heartbeat',
      'connected',
    ]);
  });

  it('also logs at debug what the caller says stands for a denial at the moment', () => {
    const { logger, lines } = capturingLogger();
    let denied = true;
    const quiet = withKafkaDenialsAtDebug(logger, (text) => denied && /coordinator/.test(text));
    quiet.error('Crash: KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator');
    denied = false;
    quiet.error('Crash: KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator');
    expect(lines.map((line) => line.level)).toEqual([DEBUG, 50]);
  });
});
