/**
 * Where a worker's CPU went, from a V8 CPU profile (`BENCH_CPU_PROF=1 npm run bench` writes
 * one per scenario run into bench/results/profiles/<scenario>).
 *
 * Two splits of the sampled time, each in ms and as a share of the busy (non-idle) time:
 * - `self`: who burnt it: a library (kafkajs, pg, undici, zod …), Node's core, V8's
 *   builtins and garbage collector, or our code by folder;
 * - `stage`: on whose behalf: the innermost frame of our code on the sample's stack (its
 *   folder under src/, or the reference program), else the library that runs on its own
 *   (kafkajs' fetch loop, a socket read) or the runtime.
 *
 * `node dist/bench/profile/summarize.js <file.cpuprofile> [--skip-ms N] [--orders N]`
 * prints both (per order too when --orders is given) as JSON; --skip-ms leaves out the
 * start (boot) of the process.
 */
import { readFile } from 'node:fs/promises';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileSplit {
  /** Sampled time after the skipped start, idle included (ms). */
  readonly sampledMs: number;
  readonly busyMs: number;
  readonly self: Record<string, number>;
  readonly stage: Record<string, number>;
}

const LIBRARIES: readonly (readonly [RegExp, string])[] = [
  [/node_modules\/kafkajs\//, 'kafkajs'],
  [/node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+)\//, 'pg'],
  [/node_modules\/undici\//, 'undici'],
  [/node_modules\/zod\//, 'zod'],
  [/node_modules\/(@nestjs\/[a-z-]+|rxjs|reflect-metadata)\//, 'nest'],
  [/node_modules\/typeorm\//, 'typeorm'],
  [/node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream)\//, 'logging'],
  [/node_modules\/(@opentelemetry\/[a-z-]+)\//, 'opentelemetry'],
  [/node_modules\/prom-client\//, 'metrics'],
  [/node_modules\//, 'other libraries'],
];

/** Who a frame belongs to (the self split). */
export function ownerOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(garbage collector)') return 'V8: garbage collector';
    if (functionName === '(program)') return 'V8: native / program';
    return 'V8: builtins (JSON, Buffer, crypto …)';
  }
  const ours = ourFolder(url);
  if (ours !== undefined) return ours;
  for (const [pattern, name] of LIBRARIES) if (pattern.test(url)) return name;
  if (url.startsWith('node:')) return `node: ${coreModule(url)}`;
  return 'other';
}

/** `src/<folder>` (engine code one level deeper) or `reference` for our own code. */
export function ourFolder(url: string): string | undefined {
  if (/\/bench\/reference\//.test(url)) return 'reference program';
  const match = /\/dist\/src\/(.+)$/.exec(url) ?? /\/src\/(.+)\.[jt]s$/.exec(url);
  if (match === null || url.includes('node_modules')) return undefined;
  const parts = (match[1] ?? '').split('/');
  if (parts.length <= 1) return 'src (top level)';
  const [first, second] = parts;
  if (first === 'orders' && second === 'engine') return 'src/orders/engine';
  return `src/${first}`;
}

function coreModule(url: string): string {
  const name = url.replace(/^node:(internal\/)?/, '');
  if (/^(net|tls|dns|stream_base_commons)/.test(name)) return 'sockets';
  if (/^streams?\//.test(name) || name === 'stream') return 'streams';
  if (/^(timers|process\/task_queues|async_hooks|async_context_frame)/.test(name))
    return 'timers and microtasks';
  if (/^(buffer|util|encoding)/.test(name)) return 'buffers and text';
  if (/^(events|event_target)/.test(name)) return 'events';
  if (/^(crypto|webcrypto)/.test(name)) return 'crypto';
  return 'other core';
}

/** The two splits of a profile, leaving out its first `skipMs`. */
export function splitProfile(profile: CpuProfile, skipMs = 0): ProfileSplit {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const stageCache = new Map<number, string>();
  const stageOf = (id: number): string => {
    const cached = stageCache.get(id);
    if (cached !== undefined) return cached;
    let stage: string | undefined;
    let outermostLibrary: string | undefined;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame === undefined) break;
      const ours = ourFolder(frame.url);
      if (ours !== undefined) {
        stage = ours;
        break;
      }
      const owner = ownerOf(frame);
      if (!owner.startsWith('V8') && owner !== 'other' && owner !== '(idle)') {
        outermostLibrary = owner;
      }
    }
    const result = stage ?? outermostLibrary ?? ownerOf(byId.get(id)?.callFrame ?? EMPTY);
    stageCache.set(id, result);
    return result;
  };

  const self: Record<string, number> = {};
  const stage: Record<string, number> = {};
  let elapsedUs = 0;
  let sampledUs = 0;
  let busyUs = 0;
  const skipUs = skipMs * 1000;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    elapsedUs += delta;
    if (elapsedUs < skipUs) continue;
    // The time up to the next sample belongs to this one.
    const spanUs = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i] ?? -1);
    if (node === undefined) continue;
    sampledUs += spanUs;
    const owner = ownerOf(node.callFrame);
    if (owner === '(idle)') continue;
    busyUs += spanUs;
    self[owner] = (self[owner] ?? 0) + spanUs;
    const on = stageOf(node.id);
    stage[on] = (stage[on] ?? 0) + spanUs;
  }
  return {
    sampledMs: Math.round(sampledUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    self: inMs(self),
    stage: inMs(stage),
  };
}

const EMPTY: CallFrame = { functionName: '', url: '' };

function inMs(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(record)
      .sort(([, a], [, b]) => b - a)
      .map(([name, us]) => [name, Math.round(us / 100) / 10]),
  );
}

/** Each entry per order (µs), for comparing runs of different lengths. */
export function perOrder(record: Record<string, number>, orders: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(record).map(([name, ms]) => [name, Math.round((ms * 1000) / orders)]),
  );
}

async function main(): Promise<void> {
  const [file, ...rest] = process.argv.slice(2);
  if (file === undefined) {
    throw new Error('usage: summarize <file.cpuprofile> [--skip-ms N] [--orders N]');
  }
  const option = (name: string): number | undefined => {
    const at = rest.indexOf(name);
    return at < 0 ? undefined : Number(rest[at + 1]);
  };
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const split = splitProfile(profile, option('--skip-ms') ?? 0);
  const orders = option('--orders');
  const output =
    orders === undefined
      ? split
      : {
          ...split,
          busyUsPerOrder: Math.round((split.busyMs * 1000) / orders),
          selfUsPerOrder: perOrder(split.self, orders),
          stageUsPerOrder: perOrder(split.stage, orders),
        };
  process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exitCode = 1;
  });
}
