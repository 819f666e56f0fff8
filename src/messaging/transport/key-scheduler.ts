/**
 * Per-key scheduling inside partitions (the model of Confluent's Parallel Consumer, "KEY"
 * ordering): within one partition, work items with different keys may run at the same
 * time, items with the same key run strictly one after the other in arrival order.
 *
 * An item without a key (a Kafka message with a null key) is a barrier for its partition:
 * it starts only once every earlier item of the partition has finished, and no later item
 * of the partition starts before it has finished. So a keyless message keeps its place in
 * the partition's order relative to every keyed message (it may belong to any order).
 *
 * Pure bookkeeping, no I/O and no timers: `enqueue` and `complete` return the items that
 * became runnable, and the caller starts them. Every item passes through the states
 * queued -> running -> finished, or queued -> dropped (see `dropQueued`).
 */

/** A handle on one scheduled item; pass it back to `complete`. */
export interface Ticket<T> {
  readonly item: T;
  readonly partition: string;
  /** Null for a barrier (keyless item). */
  readonly lane: string | null;
}

type EntryState = 'queued' | 'running' | 'finished' | 'dropped';

interface Entry<T> extends Ticket<T> {
  state: EntryState;
  epoch: Epoch<T>;
}

/**
 * A barrier (or the partition's start) followed by the keyed items that arrived after it
 * and before the next barrier. Only the first epoch of a partition is active.
 */
interface Epoch<T> {
  barrier: Entry<T> | null;
  /** Per key: the lane's items in arrival order; the head may be running. */
  readonly lanes: Map<string, Entry<T>[]>;
  /** Keyed items of this epoch that are queued or running. */
  unfinished: number;
}

interface PartitionState<T> {
  readonly epochs: Epoch<T>[];
}

export class KeyScheduler<T> {
  private readonly partitions = new Map<string, PartitionState<T>>();
  private queuedCount = 0;
  private runningCount = 0;

  /** Items waiting for their turn. */
  get queued(): number {
    return this.queuedCount;
  }

  /** Items handed out as runnable and not completed yet. */
  get running(): number {
    return this.runningCount;
  }

  /** Adds an item at the end of its partition; returns the items that may start now. */
  enqueue(partition: string, lane: string | null, item: T): { ticket: Ticket<T>; start: T[] } {
    let state = this.partitions.get(partition);
    if (state === undefined) {
      state = { epochs: [] };
      this.partitions.set(partition, state);
    }
    const start: T[] = [];
    this.queuedCount++;
    if (lane === null) {
      const epoch: Epoch<T> = { barrier: null, lanes: new Map(), unfinished: 0 };
      const entry: Entry<T> = { item, partition, lane, state: 'queued', epoch };
      epoch.barrier = entry;
      state.epochs.push(epoch);
      if (state.epochs.length === 1) this.activate(epoch, start);
      return { ticket: entry, start };
    }
    let epoch = state.epochs[state.epochs.length - 1];
    if (epoch === undefined) {
      epoch = { barrier: null, lanes: new Map(), unfinished: 0 };
      state.epochs.push(epoch);
    }
    const entry: Entry<T> = { item, partition, lane, state: 'queued', epoch };
    let queue = epoch.lanes.get(lane);
    if (queue === undefined) {
      queue = [];
      epoch.lanes.set(lane, queue);
    }
    queue.push(entry);
    epoch.unfinished++;
    if (queue.length === 1 && epoch === state.epochs[0] && this.barrierCleared(epoch)) {
      this.run(entry, start);
    }
    return { ticket: entry, start };
  }

  /** Marks a running item finished; returns the items that may start now. */
  complete(ticket: Ticket<T>): T[] {
    const entry = ticket as Entry<T>;
    if (entry.state !== 'running') {
      throw new Error(`KeyScheduler.complete: item is ${entry.state}, not running`);
    }
    entry.state = 'finished';
    this.runningCount--;
    const start: T[] = [];
    const epoch = entry.epoch;
    if (entry.lane === null) {
      // The barrier finished: every lane of its epoch may start.
      for (const queue of epoch.lanes.values()) {
        const head = queue[0];
        if (head !== undefined && head.state === 'queued') this.run(head, start);
      }
    } else {
      const queue = epoch.lanes.get(entry.lane);
      if (queue === undefined || queue[0] !== entry) {
        throw new Error('KeyScheduler.complete: item is not the head of its lane');
      }
      queue.shift();
      epoch.unfinished--;
      const next = queue[0];
      if (next === undefined) epoch.lanes.delete(entry.lane);
      else if (next.state === 'queued') this.run(next, start);
    }
    this.advance(entry.partition, start);
    return start;
  }

  /**
   * Drops the queued (not started) items of a partition and returns them; running items
   * stay until completed, and later items of the partition still wait for them, so a
   * partition that comes back keeps its per-key order relative to work still running.
   */
  dropQueued(partition: string): T[] {
    const state = this.partitions.get(partition);
    if (state === undefined) return [];
    const dropped: T[] = [];
    const kept: Epoch<T>[] = [];
    for (const epoch of state.epochs) {
      const barrierRunning = epoch.barrier?.state === 'running';
      if (epoch.barrier !== null && epoch.barrier.state === 'queued') {
        this.drop(epoch.barrier, dropped);
      }
      for (const [lane, queue] of epoch.lanes) {
        const keep = queue.filter((entry) => {
          if (entry.state === 'running') return true;
          this.drop(entry, dropped);
          return false;
        });
        epoch.unfinished -= queue.length - keep.length;
        if (keep.length === 0) epoch.lanes.delete(lane);
        else epoch.lanes.set(lane, keep);
      }
      if (barrierRunning || epoch.lanes.size > 0) kept.push(epoch);
    }
    state.epochs.splice(0, state.epochs.length, ...kept);
    if (state.epochs.length === 0) this.partitions.delete(partition);
    return dropped;
  }

  /** Drops the queued items of every partition (shutdown). */
  dropAllQueued(): T[] {
    return [...this.partitions.keys()].flatMap((partition) => this.dropQueued(partition));
  }

  /** Number of queued or running items of one partition. */
  pendingIn(partition: string): number {
    const state = this.partitions.get(partition);
    if (state === undefined) return 0;
    let count = 0;
    for (const epoch of state.epochs) {
      const barrier = epoch.barrier;
      if (barrier !== null && (barrier.state === 'queued' || barrier.state === 'running')) count++;
      count += epoch.unfinished;
    }
    return count;
  }

  private barrierCleared(epoch: Epoch<T>): boolean {
    return epoch.barrier === null || epoch.barrier.state === 'finished';
  }

  /** Starts what an epoch that just became the first one may run. */
  private activate(epoch: Epoch<T>, start: T[]): void {
    if (epoch.barrier !== null && epoch.barrier.state === 'queued') {
      this.run(epoch.barrier, start);
      return;
    }
    for (const queue of epoch.lanes.values()) {
      const head = queue[0];
      if (head !== undefined && head.state === 'queued') this.run(head, start);
    }
  }

  /** Retires finished epochs at the front and activates the next one. */
  private advance(partition: string, start: T[]): void {
    const state = this.partitions.get(partition);
    if (state === undefined) return;
    for (;;) {
      const first = state.epochs[0];
      if (first === undefined) break;
      if (!this.barrierCleared(first) || first.unfinished > 0) break;
      const next = state.epochs[1];
      state.epochs.shift();
      if (next === undefined) break;
      this.activate(next, start);
    }
    if (state.epochs.length === 0) this.partitions.delete(partition);
  }

  private run(entry: Entry<T>, start: T[]): void {
    entry.state = 'running';
    this.queuedCount--;
    this.runningCount++;
    start.push(entry.item);
  }

  private drop(entry: Entry<T>, dropped: T[]): void {
    entry.state = 'dropped';
    this.queuedCount--;
    dropped.push(entry.item);
  }
}
