/**
 * Kafka authorization failures while running (an ACL withdrawn): what was denied, and the
 * one record of every denial that lasts, which /health/ready reads.
 *
 * kafkajs raises a KafkaJSProtocolError of type TOPIC_AUTHORIZATION_FAILED (29),
 * GROUP_AUTHORIZATION_FAILED (30), CLUSTER_AUTHORIZATION_FAILED (31) or
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53), none of them retriable for kafkajs: a send
 * fails at once, a consumer stops for good. Nothing here gives up: the producer's caller
 * (the outbox relay) keeps its rows and sends again, and the consumer starts itself again
 * after a back-off (kafka.consumer.ts), until the ACL is back.
 *
 * The client adapters name what they were doing (`KafkaAccess`: a topic WRITE for a send, a
 * topic or group READ for the consumer) and report `denied` / `permitted`;
 * KafkaAuthorizationStatus keeps the denials that last, logs one warning when one starts and
 * one info line when it ends (not one per retry) and counts them (KafkaAuthorizationMetrics).
 */
import { AppError, describeError } from '../../errors/app-error.js';
import type { AppLogger } from '../../logging/logger.js';

/** Kafka's resource types, as ACLs name them. */
export type KafkaResourceType = 'topic' | 'group' | 'cluster' | 'transactional_id';

/** The ACL operations the worker needs (READ and WRITE imply DESCRIBE in Kafka). */
export type KafkaAclOperation = 'READ' | 'WRITE' | 'DESCRIBE' | 'IDEMPOTENT_WRITE';

/** One operation on one resource. */
export interface KafkaAccess {
  readonly resource: KafkaResourceType;
  /** Topic, group or transactional id; `kafka-cluster` for the cluster (Kafka's own name). */
  readonly name: string;
  readonly operation: KafkaAclOperation;
}

/** A denial that lasts: what /health/ready lists. */
export interface KafkaDenial extends KafkaAccess {
  /** When the first denial of this streak was seen (ISO 8601). */
  readonly since: string;
  /** When the latest was seen (ISO 8601). */
  readonly lastDeniedAt: string;
  /** Denied attempts in this streak. */
  readonly attempts: number;
}

/** Kafka's name of the cluster resource. */
export const KAFKA_CLUSTER_RESOURCE = 'kafka-cluster';

/** The resource type each kafkajs authorization error type is about. */
const RESOURCE_OF_ERROR_TYPE: Readonly<Record<string, KafkaResourceType>> = {
  TOPIC_AUTHORIZATION_FAILED: 'topic',
  GROUP_AUTHORIZATION_FAILED: 'group',
  CLUSTER_AUTHORIZATION_FAILED: 'cluster',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'transactional_id',
};

/**
 * The resource type an authorization failure is about, when `error` (or one of the errors
 * it wraps: kafkajs nests them in `cause` and `originalError`) is one; else undefined.
 */
export function deniedResourceOf(error: unknown): KafkaResourceType | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 6; depth++) {
    if (current instanceof KafkaAuthorizationError) return current.access.resource;
    const type: unknown = Reflect.get(current, 'type');
    if (typeof type === 'string') {
      const resource = RESOURCE_OF_ERROR_TYPE[type];
      if (resource !== undefined) return resource;
    }
    current = Reflect.get(current, 'cause') ?? Reflect.get(current, 'originalError');
  }
  return undefined;
}

/**
 * Kafka refused an operation for want of an ACL. Transient: an operator can grant it again,
 * and the worker waits for that (the event waits, nothing is dropped or dead-lettered).
 */
export class KafkaAuthorizationError extends AppError {
  readonly code = 'kafka.authorization_failed';
  readonly transient = true;

  constructor(
    readonly access: KafkaAccess,
    cause: unknown,
  ) {
    super(`Kafka denied ${access.operation} on ${access.resource} ${access.name}`, {
      cause,
      metadata: { resource: access.resource, name: access.name, operation: access.operation },
    });
  }
}

/**
 * `error` as a KafkaAuthorizationError when it is an authorization failure, `access` saying
 * what was attempted (its resource type is the error's own when they differ, e.g. a send
 * refused by CLUSTER_AUTHORIZATION_FAILED); otherwise undefined.
 */
export function asAuthorizationError(
  error: unknown,
  attempted: (resource: KafkaResourceType) => KafkaAccess,
): KafkaAuthorizationError | undefined {
  if (error instanceof KafkaAuthorizationError) return error;
  const resource = deniedResourceOf(error);
  return resource === undefined
    ? undefined
    : new KafkaAuthorizationError(attempted(resource), error);
}

/** What the Kafka adapters report. */
export interface KafkaAuthorizationRecorder {
  /** Kafka refused `access` (`error` is what it answered). */
  denied(access: KafkaAccess, error?: unknown): void;
  /** `access` succeeded: a denial of it, if any, is over. Cheap when nothing is denied. */
  permitted(access: KafkaAccess): void;
}

/** Prometheus hooks (MetricsService implements them). */
export interface KafkaAuthorizationMetrics {
  /** Counter: a denial started (one per streak, not per retry). */
  kafkaAuthorizationDenied(access: KafkaAccess): void;
  /** Gauge: whether `access` is denied now. */
  kafkaAuthorizationDeniedNow(access: KafkaAccess, denied: boolean): void;
}

/** Injection token of the metrics hooks (optional). */
export const KAFKA_AUTHORIZATION_METRICS = Symbol('KAFKA_AUTHORIZATION_METRICS');

const keyOf = (access: KafkaAccess): string =>
  `${access.resource}\u0000${access.name}\u0000${access.operation}`;

interface Streak {
  readonly access: KafkaAccess;
  readonly since: number;
  lastDeniedAt: number;
  attempts: number;
}

/**
 * The denials that last, by resource and operation. Fed by the producer (topic WRITE, cluster
 * IDEMPOTENT_WRITE) and the consumer (topic and group READ); read by /health/ready.
 */
export class KafkaAuthorizationStatus implements KafkaAuthorizationRecorder {
  private readonly streaks = new Map<string, Streak>();

  constructor(
    private readonly logger: AppLogger,
    private readonly metrics?: KafkaAuthorizationMetrics,
    private readonly now: () => number = Date.now,
  ) {}

  denied(access: KafkaAccess, error?: unknown): void {
    const key = keyOf(access);
    const at = this.now();
    const streak = this.streaks.get(key);
    if (streak !== undefined) {
      streak.attempts++;
      streak.lastDeniedAt = at;
      return;
    }
    const started: Streak = { access: copyOf(access), since: at, lastDeniedAt: at, attempts: 1 };
    this.streaks.set(key, started);
    this.metrics?.kafkaAuthorizationDenied(started.access);
    this.metrics?.kafkaAuthorizationDeniedNow(started.access, true);
    this.logger.warn(
      {
        ...started.access,
        ...(error === undefined ? {} : { error: describeError(error) }),
      },
      `Kafka denies ${access.operation} on ${access.resource} ${access.name}: waiting for the ACL (nothing is dropped; retried with back-off)`,
    );
  }

  permitted(access: KafkaAccess): void {
    if (this.streaks.size === 0) return;
    const key = keyOf(access);
    const streak = this.streaks.get(key);
    if (streak === undefined) return;
    this.streaks.delete(key);
    this.metrics?.kafkaAuthorizationDeniedNow(streak.access, false);
    this.logger.info(
      { ...streak.access, deniedForMs: this.now() - streak.since, attempts: streak.attempts },
      `Kafka permits ${access.operation} on ${access.resource} ${access.name} again`,
    );
  }

  /** Every denial that lasts, oldest first. */
  denials(): KafkaDenial[] {
    return [...this.streaks.values()]
      .sort((a, b) => a.since - b.since)
      .map((streak) => ({
        ...streak.access,
        since: new Date(streak.since).toISOString(),
        lastDeniedAt: new Date(streak.lastDeniedAt).toISOString(),
        attempts: streak.attempts,
      }));
  }

  /** No denial lasts. */
  get allPermitted(): boolean {
    return this.streaks.size === 0;
  }
}

const copyOf = (access: KafkaAccess): KafkaAccess => ({
  resource: access.resource,
  name: access.name,
  operation: access.operation,
});

/** kafkajs' texts of the authorization errors all end so (codes 29, 30, 31, 53). */
const AUTHORIZATION_TEXT = /authorization failed/i;

/** The texts of a log call: its message and its `error` field. */
function textsOf(args: readonly unknown[]): string[] {
  return args.flatMap((arg) => {
    if (typeof arg === 'string') return [arg];
    if (typeof arg !== 'object' || arg === null) return [];
    const error: unknown = Reflect.get(arg, 'error');
    return typeof error === 'string' ? [error] : [];
  });
}

/**
 * `logger` for a kafkajs client, with kafkajs' own error and warning lines about an
 * authorization failure logged at debug: kafkajs logs one (or three) per denied request, so
 * per retry; KafkaAuthorizationStatus says it once when the denial starts and once when it
 * ends. `alsoDenial` names more texts that stand for a denial at the moment (kafkajs hides
 * some causes). Every other line, and every other method, is `logger`'s own.
 */
export function withKafkaDenialsAtDebug(
  logger: AppLogger,
  alsoDenial: (text: string) => boolean = () => false,
): AppLogger {
  const isDenial = (args: readonly unknown[]): boolean =>
    textsOf(args).some((text) => AUTHORIZATION_TEXT.test(text) || alsoDenial(text));
  return new Proxy(logger, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if ((property !== 'error' && property !== 'warn') || typeof value !== 'function') {
        return value;
      }
      return (...args: unknown[]): void => {
        const method: unknown = isDenial(args) ? target.debug : value;
        if (typeof method === 'function') Reflect.apply(method, target, args);
      };
    },
  });
}

/** Client options whose logger (if any) logs kafkajs' denial lines at debug (see above). */
export function withKafkaDenialsQuiet<T extends { readonly logger?: AppLogger }>(
  options: T,
  alsoDenial?: (text: string) => boolean,
): T {
  return options.logger === undefined
    ? options
    : { ...options, logger: withKafkaDenialsAtDebug(options.logger, alsoDenial) };
}
