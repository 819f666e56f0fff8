/**
 * The workers of one scale step: starting them (all in one consumer group, their output in
 * log files), waiting for a stable assignment, and timing a membership change (a worker
 * joins, leaves with SIGTERM, or is SIGKILLed) from the workers' own log lines and the
 * database (when the moved partitions were consumed again).
 */
import { join } from 'node:path';
import { WorkerProcess } from '../../testbed/worker-process.js';
import { firstAttemptsAfter } from './consumed-again.js';
import { firstAfter, readTimeline } from './timeline.js';

export interface Member {
  readonly name: string;
  readonly worker: WorkerProcess;
  readonly logFile: string;
  readonly spawnedAt: number;
  /** performance.now() at the spawn (WorkerProcess.consumingAt is on that clock). */
  readonly spawnedPerf: number;
}

export interface MembershipChange {
  readonly kind: 'join' | 'leave (SIGTERM)' | 'crash (SIGKILL)';
  readonly membersBefore: number;
  readonly membersAfter: number;
  /** Partitions that changed hands. */
  readonly moved: readonly number[];
  /** From the change (spawn, SIGTERM, SIGKILL) to the first "group is rebalancing" of another member. */
  readonly toRebalanceMs: number | null;
  /** ... to the moment every moved partition was assigned to its new holder (log lines). */
  readonly toAssignedMs: number | null;
  /** ... to the moment every moved partition had an attempt begun (database). */
  readonly toConsumedMs: number | null;
  /** From the first member seeing the rebalance to the last member's new assignment. */
  readonly pauseMs: number | null;
  /** The joiner's own start: spawn to "order events: consuming" (join only). */
  readonly joinerStartMs?: number;
}

export class WorkerGroup {
  readonly members: Member[] = [];
  private serial = 0;

  constructor(
    private readonly env: () => Record<string, string>,
    private readonly logDir: string,
    private readonly partitions: number,
  ) {}

  live(): Member[] {
    return this.members.filter((member) => member.worker.alive);
  }

  async start(count: number): Promise<Member[]> {
    return Promise.all(Array.from({ length: count }, () => this.startOne()));
  }

  async startOne(): Promise<Member> {
    this.serial++;
    const name = `w${this.serial}`;
    const logFile = join(this.logDir, `${name}.log`);
    const spawnedAt = Date.now();
    const spawnedPerf = performance.now();
    const worker = await WorkerProcess.start({
      env: this.env(),
      logFile,
      startTimeoutMs: 120_000,
    });
    const member = { name, worker, logFile, spawnedAt, spawnedPerf };
    this.members.push(member);
    return member;
  }

  /** The partitions `member` holds now (its last assignment line). */
  held(member: Member): number[] {
    return member.worker.assigned.map(Number);
  }

  /** Waits until the live members hold every partition once (false at the deadline). */
  async waitStable(timeoutMs: number, without?: Member): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const held = this.live()
        .filter((member) => member !== without)
        .flatMap((member) => this.held(member));
      if (held.length === this.partitions && new Set(held).size === this.partitions) return true;
      await sleep(200);
    }
    return false;
  }

  /** A worker joins: timed until the partitions it took were consumed again. */
  async join(
    databaseUrl: string,
    partitionOf: ReadonlyMap<string, number>,
  ): Promise<MembershipChange> {
    const before = this.live();
    const from = Date.now();
    const joiner = await this.startOne();
    await this.waitStable(60_000);
    const moved = this.held(joiner);
    const consumingAt = joiner.worker.consumingAt;
    return {
      kind: 'join',
      membersBefore: before.length,
      membersAfter: before.length + 1,
      moved,
      ...(await this.timings(from, before, moved, databaseUrl, partitionOf)),
      ...(consumingAt === undefined
        ? {}
        : { joinerStartMs: Math.round(consumingAt - joiner.spawnedPerf) }),
    };
  }

  /** The oldest live worker leaves (SIGTERM, a drain) or dies (SIGKILL). */
  async remove(
    how: 'term' | 'kill',
    databaseUrl: string,
    partitionOf: ReadonlyMap<string, number>,
  ): Promise<MembershipChange> {
    const [victim, ...others] = this.live();
    if (victim === undefined) throw new Error('no worker to remove');
    const moved = this.held(victim);
    const from = Date.now();
    const gone = how === 'kill' ? victim.worker.kill() : victim.worker.stop();
    await this.waitStable(90_000, victim);
    const timings = await this.timings(from, others, moved, databaseUrl, partitionOf);
    await gone;
    return {
      kind: how === 'kill' ? 'crash (SIGKILL)' : 'leave (SIGTERM)',
      membersBefore: others.length + 1,
      membersAfter: others.length,
      moved,
      ...timings,
    };
  }

  private async timings(
    from: number,
    observers: readonly Member[],
    moved: readonly number[],
    databaseUrl: string,
    partitionOf: ReadonlyMap<string, number>,
  ): Promise<
    Pick<MembershipChange, 'toRebalanceMs' | 'toAssignedMs' | 'toConsumedMs' | 'pauseMs'>
  > {
    await sleep(300); // the log lines of the last assignment reach their files
    const timelines = this.live().map((member) => readTimeline(member.logFile));
    const rebalancing = observers
      .map((member) => firstAfter(readTimeline(member.logFile), 'rebalancing', from)?.at)
      .filter((at): at is number => at !== undefined);
    // Assigned: for each moved partition, the first assignment line (after `from`) of a
    // live member that lists it.
    const assignedAt = new Map<number, number>();
    for (const partition of moved) {
      const times = timelines
        .map(
          (timeline) =>
            firstAfter(timeline, 'assignment', from, (entry) =>
              (entry.assigned ?? []).includes(partition),
            )?.at,
        )
        .filter((at): at is number => at !== undefined);
      if (times.length > 0) assignedAt.set(partition, Math.min(...times));
    }
    // Consumed again: an attempt begun on the partition after it was assigned again (up to
    // 90 s); before that, the old holder may still have begun some.
    const since = Math.min(...moved.map((partition) => assignedAt.get(partition) ?? from));
    const consumed = new Map<number, number>();
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const first = await firstAttemptsAfter(databaseUrl, since, moved, partitionOf, assignedAt);
      for (const [partition, at] of first) consumed.set(partition, at);
      if (consumed.size === moved.length) break;
      await sleep(250);
    }
    const lastAssignment = Math.max(
      ...timelines.map(
        (timeline) =>
          timeline.filter((entry) => entry.kind === 'assignment' && entry.at >= from).pop()?.at ??
          -Infinity,
      ),
    );
    const firstRebalance = rebalancing.length === 0 ? undefined : Math.min(...rebalancing);
    const latest = (times: ReadonlyMap<number, number>): number | null =>
      moved.some((partition) => !times.has(partition))
        ? null
        : Math.round(Math.max(...times.values()) - from);
    return {
      toRebalanceMs: firstRebalance === undefined ? null : Math.round(firstRebalance - from),
      toAssignedMs: latest(assignedAt),
      toConsumedMs: latest(consumed),
      pauseMs:
        firstRebalance === undefined || !Number.isFinite(lastAssignment)
          ? null
          : Math.round(lastAssignment - firstRebalance),
    };
  }

  async stopAll(): Promise<(number | null)[]> {
    return Promise.all(this.live().map((member) => member.worker.stop()));
  }

  async killAll(): Promise<void> {
    await Promise.allSettled(this.members.map((member) => member.worker.kill()));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
