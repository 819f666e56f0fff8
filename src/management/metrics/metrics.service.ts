/**
 * Prometheus metrics (prom-client) for the worker: process defaults plus what the order
 * transport, the outbox relay and the Payflow client report through their own small
 * interfaces. prom-client rather than hand-written exposition: it is the standard
 * library for the format and its default metrics (event loop lag, heap, GC) come free
 * (process.metrics.ts: the event-loop delay is sampled only while scraped).
 */
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { ProbeOutcome } from '../../orders/engine/command-spec.js';
import type { LateEffectDecision, ProbeMetrics } from '../../orders/engine/probe-metrics.js';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DeadLetterReason } from '../../errors/app-error.js';
import type {
  KafkaAccess,
  KafkaAuthorizationMetrics,
} from '../../messaging/security/kafka-authorization.js';
import type {
  InboundEventsMetrics,
  ProcessOutcome,
  RetryCause,
} from '../../messaging/transport/transport.metrics.js';
import type { ClientErrorReason, PublicListenerMetrics } from '../public-listener.js';
import type { OutboxRelayMetrics } from '../../outbox/relay.options.js';
import type {
  PassResult,
  PollOutcome,
  ReconciliationMetrics,
} from '../../reconciliation/reconciliation.poller.js';
import type { SettlementMetrics } from '../../settlements/nightly/nightly-settlements.cron.js';
import { registerProcessMetrics, type EventLoopDelaySampler } from './process.metrics.js';
import type { NightlyRunResult } from '../../settlements/nightly/nightly-settlements.runner.js';

@Injectable()
export class MetricsService
  implements
    InboundEventsMetrics,
    OutboxRelayMetrics,
    SettlementMetrics,
    ReconciliationMetrics,
    PublicListenerMetrics,
    KafkaAuthorizationMetrics,
    ProbeMetrics,
    OnModuleDestroy
{
  readonly registry = new Registry();

  /** A metric registered in this registry (used by the field initializers below). */
  private gauge<L extends string = string>(name: string, help: string, labelNames: L[] = []) {
    return new Gauge<L>({ name, help, labelNames, registers: [this.registry] });
  }
  private counter<L extends string = string>(name: string, help: string, labelNames: L[] = []) {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }
  private histogram<L extends string = string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: L[] = [],
  ) {
    return new Histogram<L>({ name, help, buckets, labelNames, registers: [this.registry] });
  }

  private readonly inFlightGauge = this.gauge(
    'payflow_bridge_order_events_in_flight',
    'Order events being processed (including back-off waits)',
  );
  private readonly queuedGauge = this.gauge(
    'payflow_bridge_order_events_queued',
    'Order events accepted from Kafka and waiting for their order’s turn',
  );
  private readonly heldBytesGauge = this.gauge(
    'payflow_bridge_order_events_held_bytes',
    'Bytes of the order events held (queued + in flight), bounded by MAX_IN_FLIGHT_BYTES',
  );
  private readonly lagGauge = this.gauge(
    'payflow_bridge_order_events_partition_lag',
    'High watermark minus committed position, per partition',
    ['topic', 'partition'],
  );
  private readonly processedCounter = this.counter(
    'payflow_bridge_order_events_processed_total',
    'Order events finished, by outcome',
    ['outcome'],
  );
  private readonly deadLetterCounter = this.counter(
    'payflow_bridge_dead_letters_total',
    'Order events dead-lettered, by reason',
    ['reason'],
  );
  private readonly retryCounter = this.counter(
    'payflow_bridge_order_events_retries_total',
    'Retries scheduled, by cause',
    ['cause'],
  );
  private readonly pauseCounter = this.counter(
    'payflow_bridge_order_events_fetch_paused_total',
    'Times fetching waited because MAX_IN_FLIGHT or MAX_IN_FLIGHT_BYTES was reached',
  );
  private readonly probeCounter = this.counter(
    'payflow_bridge_command_probes_total',
    'Calls that may have taken effect, decided by reading Payflow: by command type and outcome',
    ['type', 'outcome'],
  );
  private readonly lateEffectHolds = this.counter(
    'payflow_bridge_late_effect_holds_total',
    'Calls found not applied while their request may still land (PAYFLOW_LATE_EFFECT_WINDOW): held, not sent again',
    ['type'],
  );
  private readonly lateEffectDecisions = this.histogram(
    'payflow_bridge_late_effect_decision_seconds',
    'From the first hold of a call to its decision: took_effect, sent_again or in_doubt',
    [1, 5, 15, 30, 60, 120, 180, 300, 600],
    ['type', 'outcome'],
  );
  private readonly publishedCounter = this.counter(
    'payflow_bridge_outbox_published_total',
    'Outbox messages published',
  );
  private readonly pendingGauge = this.gauge(
    'payflow_bridge_outbox_pending',
    'Outbox messages waiting to be published',
  );
  private readonly oldestPendingGauge = this.gauge(
    'payflow_bridge_outbox_oldest_pending_seconds',
    'Age of the oldest unpublished outbox message (0 when none)',
  );
  private readonly publishFailedCounter = this.counter(
    'payflow_bridge_outbox_publish_failures_total',
    'Outbox batches that failed to publish (retried)',
  );
  private readonly bucketsGauge = this.gauge(
    'payflow_bridge_outbox_buckets_owned',
    'Outbox buckets this replica publishes',
  );
  private readonly handledHistogram = this.histogram(
    'payflow_bridge_order_event_handle_seconds',
    'Order events finished, by type and outcome: seconds from the first attempt, retries included',
    [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    ['type', 'outcome'],
  );

  readonly payflowCalls = this.histogram(
    'payflow_bridge_payflow_call_seconds',
    'Duration of calls to Payflow, by endpoint and HTTP status (0 = no answer)',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    ['endpoint', 'status'],
  );

  /** Group commit: how many units (event steps) each committed transaction carried. */
  private readonly batchUnits = this.histogram(
    'payflow_bridge_db_batch_units',
    'Units of work committed together in one batched Postgres transaction',
    [1, 2, 5, 10, 20, 50, 100, 200, 500],
  );

  private readonly settlementPulls = this.counter(
    'payflow_bridge_settlement_pulls_total',
    'Settlement nights the nightly run pulled, by outcome (stored, changed, unchanged, failed)',
    ['outcome'],
  );
  private readonly settlementRows = this.counter(
    'payflow_bridge_settlement_rows_total',
    'Settlement rows stored and published by the nightly run, by kind (parsed, bad)',
    ['kind'],
  );
  private readonly settlementMissing = this.gauge(
    'payflow_bridge_settlement_nights_missing',
    'Settlement nights still missing after the last nightly run of this replica',
  );
  private readonly settlementLastRun = this.gauge(
    'payflow_bridge_settlement_last_run_timestamp_seconds',
    'When this replica last finished a nightly settlement run (0 = never)',
  );
  private readonly settlementRunFailures = this.counter(
    'payflow_bridge_settlement_run_failures_total',
    'Nightly settlement runs that failed as a whole (e.g. organizations not listed)',
  );

  private readonly statusPolls = this.counter(
    'payflow_bridge_status_polls_total',
    'GET paymentStatus calls of the reconciliation poller, by outcome (unchanged, changed, stale, failed)',
    ['outcome'],
  );
  private readonly statusPollWatched = this.gauge(
    'payflow_bridge_status_poll_payments_watched',
    'Open payments the last reconciliation pass of this replica checked',
  );
  private readonly statusPollLastPass = this.gauge(
    'payflow_bridge_status_poll_last_pass_timestamp_seconds',
    'When this replica last finished a reconciliation pass (0 = never)',
  );

  private readonly publicRefused = this.counter(
    'payflow_bridge_public_connections_refused_total',
    'Connections to the public listener reset on arrival: their client already held HTTP_MAX_CONNECTIONS_PER_ADDRESS',
  );
  private readonly publicClientErrors = this.counter(
    'payflow_bridge_public_client_errors_total',
    'Clients of the public listener cut off before a request reached the application, by reason (timeout, headers_too_large, closed_early, malformed, tls_handshake)',
    ['reason'],
  );

  private readonly kafkaDenials = this.counter(
    'payflow_bridge_kafka_authorization_denials_total',
    'Kafka authorization denials (an ACL withdrawn while running), one per streak, by resource type, name and operation',
    ['resource', 'name', 'operation'],
  );
  private readonly kafkaDenied = this.gauge(
    'payflow_bridge_kafka_authorization_denied',
    '1 while Kafka denies the operation on the resource (the work waits), 0 once it is permitted again',
    ['resource', 'name', 'operation'],
  );

  /** prom-client's default process metrics; the event-loop delay is sampled while scraped. */
  private readonly eventLoop: EventLoopDelaySampler;

  constructor() {
    // The event-loop delay histogram samples every 100 ms rather than prom-client's 10 ms
    // (100 timer wake-ups a second were a good part of what an idle worker cost), and only
    // while /metrics is scraped (process.metrics.ts).
    this.eventLoop = registerProcessMetrics(this.registry, {
      prefix: 'payflow_bridge_',
      eventLoopMonitoringPrecision: 100,
    });
  }

  onModuleDestroy(): void {
    this.eventLoop.stop();
  }

  inFlight(count: number): void {
    this.inFlightGauge.set(count);
  }
  queued(count: number): void {
    this.queuedGauge.set(count);
  }
  partitionLag(topic: string, partition: number, lag: number): void {
    this.lagGauge.set({ topic, partition: String(partition) }, lag);
  }
  processed(outcome: ProcessOutcome): void {
    this.processedCounter.inc({ outcome });
  }
  handled(type: string, outcome: ProcessOutcome, seconds: number): void {
    this.handledHistogram.observe({ type, outcome }, seconds);
  }
  deadLettered(reason: DeadLetterReason): void {
    this.deadLetterCounter.inc({ reason });
  }
  retried(cause: RetryCause): void {
    this.retryCounter.inc({ cause });
  }
  heldBytes(bytes: number): void {
    this.heldBytesGauge.set(bytes);
  }
  fetchPaused(): void {
    this.pauseCounter.inc();
  }
  published(count: number): void {
    this.publishedCounter.inc(count);
  }
  pending(count: number, oldestAgeSeconds: number | null): void {
    this.pendingGauge.set(count);
    this.oldestPendingGauge.set(oldestAgeSeconds ?? 0);
  }
  publishFailed(): void {
    this.publishFailedCounter.inc();
  }
  bucketsOwned(count: number): void {
    this.bucketsGauge.set(count);
  }
  batchCommitted(units: number): void {
    this.batchUnits.observe(units);
  }
  nightlyRun(result: NightlyRunResult): void {
    for (const night of result.pulled) {
      this.settlementPulls.inc({ outcome: night.result.outcome });
      if (night.result.outcome === 'stored' || night.result.outcome === 'changed') {
        this.settlementRows.inc({ kind: 'parsed' }, night.result.file?.rows ?? 0);
        this.settlementRows.inc({ kind: 'bad' }, night.result.file?.badRows ?? 0);
      }
    }
    if (result.failed.length > 0)
      this.settlementPulls.inc({ outcome: 'failed' }, result.failed.length);
    this.settlementMissing.set(result.stillMissing);
    this.settlementLastRun.set(Date.now() / 1000);
  }
  probed(type: string, outcome: ProbeOutcome): void {
    this.probeCounter.inc({ type, outcome });
  }
  lateEffectHeld(type: string): void {
    this.lateEffectHolds.inc({ type });
  }
  lateEffectDecided(type: string, outcome: LateEffectDecision, seconds: number): void {
    this.lateEffectDecisions.observe({ type, outcome }, seconds);
  }
  polled(outcome: PollOutcome): void {
    this.statusPolls.inc({ outcome });
  }
  passDone(result: PassResult): void {
    this.statusPollWatched.set(result.checked);
    this.statusPollLastPass.set(Date.now() / 1000);
  }
  nightlyRunFailed(): void {
    this.settlementRunFailures.inc();
  }
  connectionRefused(): void {
    this.publicRefused.inc();
  }
  clientError(reason: ClientErrorReason): void {
    this.publicClientErrors.inc({ reason });
  }
  kafkaAuthorizationDenied(access: KafkaAccess): void {
    this.kafkaDenials.inc({
      resource: access.resource,
      name: access.name,
      operation: access.operation,
    });
  }
  kafkaAuthorizationDeniedNow(access: KafkaAccess, denied: boolean): void {
    this.kafkaDenied.set(
      { resource: access.resource, name: access.name, operation: access.operation },
      denied ? 1 : 0,
    );
  }
}
