/**
 * What compose-secured.test.ts needs to read the compose files as `docker compose -f … -f …`
 * does (the two merged), the broker's properties as Kafka reads them, and stand-ins of the
 * Kafka command-line tools that record how a script called them.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';

export const ROOT = join(import.meta.dirname, '..', '..');
export const SECURED_DIR = './deploy/secured/';

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const serviceSchema = z
  .object({
    build: z.string().optional(),
    image: z.string().optional(),
    command: z.array(z.string()).optional(),
    environment: z.record(z.string(), scalar.nullable()).optional(),
    depends_on: z.record(z.string(), z.object({ condition: z.string() })).optional(),
    ports: z.array(z.string()).optional(),
    volumes: z.array(z.string()).optional(),
    secrets: z.array(z.string()).optional(),
    healthcheck: z
      .object({ test: z.array(z.string()).optional(), disable: z.boolean().optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();
export type Service = z.infer<typeof serviceSchema>;
const composeSchema = z.object({
  services: z.record(z.string(), serviceSchema),
  secrets: z.record(z.string(), z.object({ file: z.string() }).strict()).optional(),
  volumes: z.record(z.string(), z.unknown().nullable()).optional(),
});
export type Compose = z.infer<typeof composeSchema>;

export function readCompose(file: string): { text: string; compose: Compose } {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return { text, compose: composeSchema.parse(parse(text, { merge: true })) };
}

/** The container path of a short-syntax volume (`source:target[:mode]`). */
export function volumeTarget(volume: string): string {
  return volume.split(':')[1] ?? volume;
}

/** One service of an override merged into the base's, as compose merges them. */
function mergeService(base: Service | undefined, override: Service): Service {
  if (base === undefined) return override;
  const byTarget = new Map<string, string>();
  for (const volume of [...(base.volumes ?? []), ...(override.volumes ?? [])]) {
    byTarget.set(volumeTarget(volume), volume);
  }
  return {
    ...base,
    ...override,
    environment: { ...base.environment, ...override.environment },
    depends_on: { ...base.depends_on, ...override.depends_on },
    ports: [...new Set([...(base.ports ?? []), ...(override.ports ?? [])])],
    volumes: [...byTarget.values()],
    secrets: [...new Set([...(base.secrets ?? []), ...(override.secrets ?? [])])],
    healthcheck: { ...base.healthcheck, ...override.healthcheck },
  };
}

export function mergeCompose(base: Compose, override: Compose): Compose {
  const names = new Set([...Object.keys(base.services), ...Object.keys(override.services)]);
  return {
    services: Object.fromEntries(
      [...names].map((name) => {
        const over = override.services[name];
        const under = base.services[name];
        const merged = over === undefined ? under : mergeService(under, over);
        if (merged === undefined) throw new Error(`no service ${name}`);
        return [name, merged];
      }),
    ),
    secrets: { ...base.secrets, ...override.secrets },
    volumes: { ...base.volumes, ...override.volumes },
  };
}

/** Java properties as Kafka reads them: `key=value` lines, `\n` and `\\` unescaped. */
export function readProperties(text: string): Map<string, string> {
  const properties = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    const value = line
      .slice(at + 1)
      .replace(/\\(.)/g, (_match, escaped: string) => (escaped === 'n' ? '\n' : escaped));
    properties.set(line.slice(0, at), value);
  }
  return properties;
}

/** Reads a required entry (the tests fail with its name when it is missing). */
export function required<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error(`missing: ${what}`);
  return value;
}

/** One call of a recorded Kafka tool. */
export interface Invocation {
  readonly tool: string;
  readonly args: string[];
  /** Contents of the files named by --command-config and --add-config-file. */
  readonly files: Record<string, string>;
}

/** The value after `name` in a recorded call. */
export function flag(invocation: Invocation, name: string): string | undefined {
  const index = invocation.args.indexOf(name);
  return index < 0 ? undefined : invocation.args[index + 1];
}

/**
 * kafka-configs.sh and kafka-acls.sh in `bin` that record how they were called, and the files
 * they were handed (which a script may delete when it ends); `invocations()` reads them back.
 */
export function recordingKafkaTools(bin: string): {
  readonly bin: string;
  invocations(): Invocation[];
} {
  const record = join(bin, 'calls.log');
  mkdirSync(bin, { recursive: true });
  for (const tool of ['kafka-configs.sh', 'kafka-acls.sh']) {
    writeFileSync(
      join(bin, tool),
      [
        '#!/usr/bin/env bash',
        'set -euo pipefail',
        `{ printf '%s\\n' '--tool' '${tool}'`,
        '  previous=""',
        '  for arg in "$@"; do',
        '    printf \'%s\\n\' "$arg"',
        '    if [[ "$previous" == --command-config || "$previous" == --add-config-file ]]; then',
        '      printf \'%s\\n\' "--content-of" "$(base64 -w0 "$arg")"',
        '    fi',
        '    previous="$arg"',
        '  done',
        `  printf '%s\\n' '--end'; } >>'${record}'`,
        '',
      ].join('\n'),
    );
    chmodSync(join(bin, tool), 0o755);
  }
  return {
    bin,
    invocations() {
      const invocations: Invocation[] = [];
      let current: Invocation | undefined;
      const lines = readFileSync(record, 'utf8').split('\n');
      for (let at = 0; at < lines.length; at += 1) {
        const line = lines[at] ?? '';
        if (line === '--tool') {
          current = { tool: lines[(at += 1)] ?? '', args: [], files: {} };
        } else if (line === '--end' && current !== undefined) {
          invocations.push(current);
          current = undefined;
        } else if (line === '--content-of' && current !== undefined) {
          const file = current.args.at(-1) ?? '';
          current.files[file] = Buffer.from(lines[(at += 1)] ?? '', 'base64').toString('utf8');
        } else if (current !== undefined) {
          current.args.push(line);
        }
      }
      return invocations;
    },
  };
}

/** `NAME://host:port,…` (listeners, advertised.listeners) as name → { host, port }. */
export function listenersOf(value: string): Map<string, { host: string; port: string }> {
  return new Map(
    value.split(',').map((entry) => {
      const match = required(/^(\w+):\/\/([^:]*):(\d+)$/.exec(entry), entry);
      return [match[1] ?? '', { host: match[2] ?? '', port: match[3] ?? '' }];
    }),
  );
}

/**
 * The secured variant: both files read and merged, and the files it mounts made by
 * deploy/secured/make-certs.sh into a temporary directory, so that each service's files and
 * environment can be found on this host.
 */
export class SecuredVariant {
  readonly base = readCompose('docker-compose.yml');
  readonly secured = readCompose('docker-compose.secured.yml');
  readonly merged = mergeCompose(this.base.compose, this.secured.compose);
  /** Where make-certs.sh wrote (certs/, secrets/). */
  readonly generated = mkdtempSync(join(tmpdir(), 'compose-secured-'));

  constructor() {
    this.makeCerts();
  }

  makeCerts(): void {
    execFileSync('bash', [join(ROOT, 'deploy/secured/make-certs.sh'), this.generated], {
      stdio: 'pipe',
    });
  }

  /** The content of every file make-certs.sh made. */
  generatedContents(): string[] {
    return ['certs', 'secrets'].flatMap((directory) =>
      readdirSync(join(this.generated, directory)).map((file) =>
        readFileSync(join(this.generated, directory, file), 'utf8'),
      ),
    );
  }

  remove(): void {
    rmSync(this.generated, { recursive: true, force: true });
  }

  service(name: string): Service {
    return required(this.merged.services[name], `service ${name} of the secured variant`);
  }

  /** Where a compose source path (./deploy/secured/…, ./anything) is on this host. */
  hostPath(source: string): string {
    return source.startsWith(`${SECURED_DIR}certs/`) || source.startsWith(`${SECURED_DIR}secrets/`)
      ? join(this.generated, source.slice(SECURED_DIR.length))
      : join(ROOT, source);
  }

  /**
   * The compose source of a file a service sees at `containerPath`: a compose secret it lists,
   * or a bind mount of this repository; undefined for a file of a named volume.
   */
  sourceOrNone(name: string, containerPath: string): string | undefined {
    const service = this.service(name);
    const secret = /^\/run\/secrets\/([^/]+)$/.exec(containerPath)?.[1];
    if (secret !== undefined) {
      if (!(service.secrets ?? []).includes(secret)) {
        throw new Error(`${name} reads ${containerPath} but does not list the secret ${secret}`);
      }
      return required(this.merged.secrets?.[secret], `secret ${secret}`).file;
    }
    const volume = (service.volumes ?? []).find((entry) => volumeTarget(entry) === containerPath);
    const source = volume?.split(':')[0];
    return source?.startsWith('./') === true ? source : undefined;
  }

  /** The file on this host that a service sees at `containerPath`. */
  fileOf(name: string, containerPath: string): string {
    return this.hostPath(
      required(this.sourceOrNone(name, containerPath), `${name}: a file at ${containerPath}`),
    );
  }

  /** A service's environment as its process sees it, its files moved to this host. */
  envOnHost(name: string): Record<string, string> {
    return Object.fromEntries(
      Object.entries(this.service(name).environment ?? {}).map(([key, value]) => {
        const text = value === null ? '' : String(value);
        const source = key.endsWith('_FILE') ? this.sourceOrNone(name, text) : undefined;
        return [key, source === undefined ? text : this.hostPath(source)];
      }),
    );
  }

  /** A compose secret's value (one trailing newline removed, as the services read it). */
  secretValue(name: string): string {
    const file = required(this.merged.secrets?.[name], `secret ${name}`).file;
    return readFileSync(this.hostPath(file), 'utf8').replace(/\n$/, '');
  }
}
