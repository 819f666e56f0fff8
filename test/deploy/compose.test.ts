/**
 * docker-compose.yml, checked without a Docker engine: every service built from this
 * repository is given an environment its own configuration schema accepts (the worker's,
 * the CLI's, the sandbox's), the topics `kafka-init` creates are exactly the ones the worker
 * checks at start-up, the services find one another where their variables say, and the
 * worker publishes its webhook port only (its management port stays on the compose network).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadCliConfig } from '../../src/cli/cli.config.js';
import { loadConfig } from '../../src/config/app-config.js';
import { requiredTopics, topicSpecs } from '../../src/messaging/kafka/topics.port.js';
import { parseSandboxEnv } from '../../src/sandbox/sandbox.config.js';

const ROOT = join(import.meta.dirname, '..', '..');

interface Service {
  readonly build?: string;
  readonly image?: string;
  readonly command?: readonly string[];
  readonly environment?: Record<string, string | number | boolean>;
  readonly depends_on?: Record<string, { readonly condition: string }>;
  readonly ports?: readonly string[];
  readonly expose?: readonly (string | number)[];
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), {
  merge: true,
}) as { services: Record<string, Service> };

function service(name: string): Service {
  const found = compose.services[name];
  if (found === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
}

/** A service's environment as the process sees it: every value a string. */
function envOf(name: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service(name).environment ?? {}).map(([key, value]) => [key, String(value)]),
  );
}

/** The value after `flag` in a command line. */
function flag(command: readonly string[], name: string): string | undefined {
  const index = command.indexOf(name);
  return index < 0 ? undefined : command[index + 1];
}

describe('docker-compose.yml', () => {
  const ours = Object.entries(compose.services).filter(([, s]) => s.build === '.');

  it('starts every service of this image with an entry point the image has', () => {
    expect(ours.map(([name]) => name).sort()).toEqual(['kafka-init', 'sandbox', 'worker']);
    for (const [, s] of ours) {
      const entry = s.command?.[1] ?? 'dist/src/main.js';
      expect(entry).toMatch(/^dist\/src\/.+\.js$/);
      const source = entry.replace(/^dist\//, '').replace(/\.js$/, '.ts');
      expect(existsSync(join(ROOT, source))).toBe(true);
    }
  });

  it('gives the worker an environment its configuration schema accepts', () => {
    const config = loadConfig(envOf('worker'));
    expect(config.KAFKA_BROKERS).toEqual(['kafka:29092']);
    expect(service('worker').depends_on).toMatchObject({
      'kafka-init': { condition: 'service_completed_successfully' },
      postgres: { condition: 'service_healthy' },
    });
  });

  it('creates, before the worker starts, exactly the topics the worker checks', () => {
    const init = service('kafka-init');
    const command = init.command ?? [];
    expect(command.slice(0, 4)).toEqual(['node', 'dist/src/cli/main.js', 'topics', 'create']);
    const cli = loadCliConfig(envOf('kafka-init'));
    const worker = loadConfig(envOf('worker'));
    expect(cli.KAFKA_BROKERS).toEqual(worker.KAFKA_BROKERS);
    const partitions = Number(flag(command, '--partitions'));
    const replicationFactor = Number(flag(command, '--replication-factor'));
    expect(Number.isInteger(partitions) && partitions >= 1).toBe(true);
    const specs = topicSpecs(cli, { partitions, replicationFactor });
    expect(specs.map((spec) => spec.name)).toEqual(requiredTopics(worker));
    // One broker in this file: a larger factor could not be met.
    const brokers = Object.values(compose.services).filter(
      (s) => s.image?.startsWith('apache/kafka') && s.command === undefined,
    );
    expect(brokers).toHaveLength(1);
    expect(replicationFactor).toBe(brokers.length);
  });

  it('points the worker at the sandbox over TLS and the sandbox back at the worker', () => {
    const sandbox = parseSandboxEnv(envOf('sandbox'));
    if (!sandbox.ok) throw new Error(sandbox.error);
    const worker = loadConfig(envOf('worker'));
    // Nothing in clear (docs/security.md): https to `payflow`, which terminates TLS with the
    // certificate the worker trusts and forwards to the sandbox's plain HTTP port.
    const payflow = new URL(worker.PAYFLOW_BASE_URL);
    expect(payflow.protocol).toBe('https:');
    expect(payflow.hostname).toBe('payflow');
    const proxy = service('payflow').command ?? [];
    expect(proxy[0]).toMatch(
      new RegExp(`^OPENSSL-LISTEN:${payflow.port},.*cert=/certs/payflow\\.crt`),
    );
    expect(proxy[1]).toBe(`TCP:sandbox:${sandbox.env.SANDBOX_PORT}`);
    expect(envOf('worker').NODE_EXTRA_CA_CERTS).toBe('/certs/payflow.crt');
    const webhooks = new URL(worker.WEBHOOK_PUBLIC_BASE_URL);
    expect(webhooks.protocol).toBe('https:');
    expect(webhooks.hostname).toBe('worker');
    expect(Number(webhooks.port)).toBe(worker.HTTP_PORT);
    expect(worker.TLS_CERT_FILE).toBe(sandbox.env.SANDBOX_WEBHOOK_CA_FILE);
    expect(envOf('sandbox').SANDBOX_WEBHOOK_WHITELIST?.split(',')).toContain('worker');
  });

  it('publishes the webhook port only, and keeps the management port on the compose network', () => {
    const worker = loadConfig(envOf('worker'));
    expect(worker.MANAGEMENT_PORT).not.toBe(worker.HTTP_PORT);
    // `host:container` (or a bare container port): the container side of each mapping.
    const published = (service('worker').ports ?? []).map((mapping) =>
      Number(mapping.split(':').at(-1)?.split('/')[0]),
    );
    expect(published).toEqual([worker.HTTP_PORT]);
    expect((service('worker').expose ?? []).map(Number)).toEqual([worker.MANAGEMENT_PORT]);
  });
});
