/**
 * CPU and memory figures of processes from /proc (Linux): a child's resident set size
 * (VmRSS), the CPU time of a process, of the whole Postgres cluster and of the machine.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** USER_HZ (clock ticks per second of /proc/<pid>/stat), usually 100. */
function clockTicks(): number {
  if (ticksPerSecond !== undefined) return ticksPerSecond;
  try {
    ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    ticksPerSecond = 100;
  }
  if (!Number.isFinite(ticksPerSecond) || ticksPerSecond <= 0) ticksPerSecond = 100;
  return ticksPerSecond;
}

/** VmRSS of a process in bytes, or undefined when it is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

interface StatFields {
  readonly comm: string;
  readonly ppid: number;
  /** utime + stime, in ticks. */
  readonly own: number;
  /** cutime + cstime (children waited for), in ticks. */
  readonly children: number;
}

function readStat(pid: number): StatFields | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm is in parentheses and may contain spaces: split after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const fields = text
    .slice(close + 2)
    .trim()
    .split(' ');
  // fields[0] is field 3 (state): utime is field 14, i.e. fields[11].
  const num = (index: number): number => Number(fields[index] ?? 0);
  return { comm, ppid: num(1), own: num(11) + num(12), children: num(13) + num(14) };
}

/** CPU seconds (user + system) a process has used so far, or undefined when it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  const stat = readStat(pid);
  return stat === undefined ? undefined : stat.own / clockTicks();
}

/**
 * CPU seconds of every `postgres` process (the postmaster, its live backends and, through
 * the postmaster's cutime, the backends that ended).
 */
export function postgresCpuSeconds(): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat === undefined || stat.comm !== 'postgres') continue;
    ticks += stat.own;
    if (stat.ppid === 1 || readStat(stat.ppid)?.comm !== 'postgres') ticks += stat.children;
  }
  return ticks / clockTicks();
}

/** Busy and total CPU time of the machine (all cores), in seconds, from /proc/stat. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is inside user).
  const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: (total - idle) / clockTicks(), total: total / clockTicks() };
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Busy share of the machine (percent of all cores) over the next `ms`. */
export async function machineBusyPercent(ms: number): Promise<number> {
  const from = machineCpuSeconds();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const to = machineCpuSeconds();
  const total = to.total - from.total;
  return total <= 0 ? 0 : round1(((to.busy - from.busy) / total) * 100);
}

/** Samples a process's VmRSS every `intervalMs` and keeps the largest value. */
export class RssSampler {
  private maxBytes = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    intervalMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  get max(): number {
    return this.maxBytes;
  }

  sample(): void {
    const rss = rssBytes(this.pid);
    if (rss !== undefined && rss > this.maxBytes) this.maxBytes = rss;
  }

  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return this.maxBytes;
  }
}

/** CPU use of the parties of a run between two snapshots, in percent of one core. */
export interface CpuSnapshot {
  readonly at: number;
  readonly worker: number;
  readonly sandbox: number;
  readonly postgres: number;
  readonly bench: number;
  readonly brokers: number;
  readonly machineBusy: number;
  readonly machineTotal: number;
}

export function cpuSnapshot(
  workerPid: number,
  sandboxPid: number,
  brokerPids: readonly number[] = [],
): CpuSnapshot {
  const machine = machineCpuSeconds();
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    worker: cpuSeconds(workerPid) ?? 0,
    sandbox: cpuSeconds(sandboxPid) ?? 0,
    postgres: postgresCpuSeconds(),
    bench: (usage.user + usage.system) / 1e6,
    brokers: brokerPids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0),
    machineBusy: machine.busy,
    machineTotal: machine.total,
  };
}

export interface CpuUse {
  /** Percent of one core over the window (200 = both cores of a 2-core machine). */
  readonly workerPct: number;
  readonly sandboxPct: number;
  readonly postgresPct: number;
  /** The bench process: the Kafka mock cluster's threads, the producer and the reader. */
  readonly benchPct: number;
  /** The real Kafka brokers' JVMs (0 for the mock). */
  readonly brokersPct: number;
  /** Busy share of the whole machine, in percent of all cores. */
  readonly machineBusyPct: number;
  /**
   * Everything else, in percent of one core: the machine's busy time minus the parties
   * above (the kernel's network stack for the loopback traffic, other programs).
   */
  readonly otherPct: number;
  /** Worker CPU milliseconds per order, over the window. */
  readonly workerMsPerOrder: number;
}

export function cpuBetween(from: CpuSnapshot, to: CpuSnapshot, orders: number): CpuUse {
  const seconds = Math.max(1e-6, (to.at - from.at) / 1000);
  const pct = (a: number, b: number): number => Math.round(((b - a) / seconds) * 1000) / 10;
  const machineTotal = to.machineTotal - from.machineTotal;
  const parties =
    to.worker -
    from.worker +
    (to.sandbox - from.sandbox) +
    (to.postgres - from.postgres) +
    (to.bench - from.bench) +
    (to.brokers - from.brokers);
  return {
    otherPct: round1(((to.machineBusy - from.machineBusy - parties) / seconds) * 100),
    workerPct: pct(from.worker, to.worker),
    sandboxPct: pct(from.sandbox, to.sandbox),
    postgresPct: pct(from.postgres, to.postgres),
    benchPct: pct(from.bench, to.bench),
    brokersPct: pct(from.brokers, to.brokers),
    machineBusyPct:
      machineTotal <= 0
        ? 0
        : Math.round(((to.machineBusy - from.machineBusy) / machineTotal) * 1000) / 10,
    workerMsPerOrder:
      orders <= 0 ? 0 : Math.round(((to.worker - from.worker) * 1_000_000) / orders) / 1000,
  };
}
