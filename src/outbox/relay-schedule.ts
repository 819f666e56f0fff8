/**
 * When the outbox relay does its periodic work, apart from the loop so that the rule is
 * read (and tested) in one place. Busy (rows seen or announced within the last
 * `rebalanceIntervalMs` × 5) it keeps the short intervals: rebalance every
 * `rebalanceIntervalMs`, metrics every `metricsIntervalMs`, and an empty pass is followed by
 * `activePollMs` (500 ms, the old idle poll). Idle it does all three with its idle pass
 * (`idlePollMs`, 30 s while LISTENing), so an idle replica runs a few statements a minute
 * instead of several a second. A relay joining or leaving asks for a rebalance now.
 */
import type { RelaySettings } from './relay.options.js';

/** A timer may fire a little early: what is due this much later counts as due now. */
const TIMER_SLACK_MS = 50;

export class RelaySchedule {
  private lastActiveAt = 0;
  private lastRebalanceAt = 0;
  private lastMetricsAt = 0;
  private rebalanceAsked = false;

  constructor(
    private readonly settings: Pick<
      RelaySettings,
      'idlePollMs' | 'activePollMs' | 'busyPollMs' | 'rebalanceIntervalMs' | 'metricsIntervalMs'
    >,
    /** Whether wake-ups from other processes are heard now (the LISTEN connection is up). */
    private readonly listening: () => boolean,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Starting: busy, with the metrics due at once. */
  reset(): void {
    this.lastActiveAt = this.clock();
    this.lastMetricsAt = 0;
  }

  /** Rows were seen, or a writer announced some. */
  active(): void {
    this.lastActiveAt = this.clock();
  }

  /** A relay joined or left, or the LISTEN connection came back: rebalance at once. */
  askRebalance(): void {
    this.rebalanceAsked = true;
  }

  isBusy(now: number = this.clock()): boolean {
    return now - this.lastActiveAt < this.settings.rebalanceIntervalMs * 5;
  }

  /**
   * The pause after a pass that found nothing: long while idle and LISTENing; short while
   * rows flow (as before LISTEN/NOTIFY: no added latency under load) or while deaf.
   */
  idlePause(now: number = this.clock()): number {
    const { idlePollMs, activePollMs } = this.settings;
    const short = this.isBusy(now) || !this.listening();
    return short ? Math.min(idlePollMs, activePollMs) : idlePollMs;
  }

  /** The idle pass's interval, whatever the state: what idle periodic work follows. */
  private idleInterval(): number {
    const { idlePollMs, activePollMs } = this.settings;
    return this.listening() ? idlePollMs : Math.min(idlePollMs, activePollMs);
  }

  /** Whether to rebalance now; if so, counts it as done. */
  takeRebalance(): boolean {
    const now = this.clock();
    if (!this.rebalanceAsked && now + TIMER_SLACK_MS < this.rebalanceDueAt(now)) return false;
    this.rebalanceAsked = false;
    this.lastRebalanceAt = now;
    return true;
  }

  /** Whether to sample the pending gauges now; if so, counts it as done. */
  takeMetrics(): boolean {
    const now = this.clock();
    const every = this.isBusy(now)
      ? this.settings.metricsIntervalMs
      : Math.max(this.settings.metricsIntervalMs, this.idleInterval());
    if (now - this.lastMetricsAt + TIMER_SLACK_MS < every) return false;
    this.lastMetricsAt = now;
    return true;
  }

  /** How long to sleep after a pass, cut short by a due retry (`retryAt`) or rebalance. */
  pauseAfter(published: number, retryAt: number | undefined): number {
    const now = this.clock();
    let until = now + (published > 0 ? this.settings.busyPollMs : this.idlePause(now));
    if (retryAt !== undefined) until = Math.min(until, retryAt);
    until = Math.min(until, Math.max(now, this.rebalanceDueAt(now)));
    return until - now;
  }

  /** Busy: every `rebalanceIntervalMs`; idle: with the idle pass. */
  private rebalanceDueAt(now: number): number {
    const every = this.isBusy(now)
      ? this.settings.rebalanceIntervalMs
      : Math.max(this.settings.rebalanceIntervalMs, this.idleInterval());
    return this.lastRebalanceAt + every;
  }
}
