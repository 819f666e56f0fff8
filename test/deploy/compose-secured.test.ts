/**
 * docker-compose.secured.yml over docker-compose.yml, checked without a Docker engine, the way
 * compose.test.ts checks the open variant: the two files are merged as `docker compose -f … -f …`
 * merges them, deploy/secured/make-certs.sh makes the files the variant mounts (into a
 * temporary directory), and then
 * - the worker's environment loads with loadConfig (SASL_SSL, SCRAM-SHA-512, its own user,
 *   every secret from a file), and kafka-init's with loadCliConfig (as admin);
 * - the broker's start script, run with the merged environment up to the properties it writes,
 *   gives SASL_SSL on every listener a client can reach and the authorizer with nothing
 *   allowed by default;
 * - the one-shot ACL script, run against recording stand-ins of kafka-configs.sh and
 *   kafka-acls.sh, creates the worker's user and grants exactly its ACLs (CONTRACT §9);
 * - no secret value is written in either YAML.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadCliConfig } from '../../src/cli/cli.config.js';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { deadLetterTopicFor } from '../../src/messaging/dead-letter-headers.js';
import { requiredTopics, topicSpecs } from '../../src/messaging/kafka/topics.port.js';
import { parseSandboxEnv } from '../../src/sandbox/sandbox.config.js';

import {
  flag,
  listenersOf,
  readProperties,
  recordingKafkaTools,
  required,
  type Invocation,
  SecuredVariant,
  type Service,
} from './compose-secured.support.js';

describe('docker-compose.secured.yml (merged over docker-compose.yml)', () => {
  let variant: SecuredVariant;
  beforeAll(() => {
    variant = new SecuredVariant();
  });
  afterAll(() => variant.remove());

  const service = (name: string): Service => variant.service(name);
  const workerConfig = (): AppConfig => loadConfig(variant.envOnHost('worker'));

  it('make-certs.sh: a CA, the broker’s certificate for kafka and localhost, random secrets, kept when run again', () => {
    const certs = join(variant.generated, 'certs');
    const ca = new X509Certificate(readFileSync(join(certs, 'ca.pem')));
    const broker = new X509Certificate(readFileSync(join(certs, 'kafka.pem')));
    expect(ca.ca).toBe(true);
    expect(broker.ca).toBe(false);
    expect(broker.verify(ca.publicKey)).toBe(true);
    expect(broker.checkHost('kafka')).toBe('kafka');
    expect(broker.checkHost('localhost')).toBe('localhost');
    expect(broker.checkIP('127.0.0.1')).toBe('127.0.0.1');
    const key = readFileSync(join(certs, 'kafka.key'), 'utf8');
    expect(key).toContain('-----BEGIN PRIVATE KEY-----');
    expect(broker.checkPrivateKey(createPrivateKey(key))).toBe(true);

    const passwords = [
      'kafka-admin-password',
      'kafka-worker-password',
      'database-password',
      'payflow-client-secret',
    ].map((name) => variant.secretValue(name));
    for (const password of passwords) expect(password).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(passwords).size).toBe(4);
    for (const directory of ['certs', 'secrets']) {
      expect(statSync(join(variant.generated, directory)).mode & 0o777).toBe(0o700);
    }
    expect(statSync(join(certs, 'ca.key')).mode & 0o777).toBe(0o600);

    const before = variant.generatedContents();
    variant.makeCerts();
    const after = variant.generatedContents();
    expect(after).toEqual(before);
    // Never committed.
    expect(
      readFileSync(variant.hostPath('./deploy/secured/.gitignore'), 'utf8').split('\n'),
    ).toEqual(expect.arrayContaining(['certs/', 'secrets/']));
  });

  it('mounts only files make-certs.sh makes, or scripts of this repository', () => {
    for (const [name, secret] of Object.entries(variant.merged.secrets ?? {})) {
      expect({ name, file: secret.file }).toEqual({
        name,
        file: expect.stringMatching(/^\.\/deploy\/secured\/(certs|secrets)\/[\w.-]+$/),
      });
      expect(existsSync(variant.hostPath(secret.file))).toBe(true);
    }
    for (const [name, s] of Object.entries(variant.merged.services)) {
      for (const volume of s.volumes ?? []) {
        const source = volume.split(':')[0] ?? '';
        if (!source.startsWith('./')) continue;
        expect({ name, volume, exists: existsSync(variant.hostPath(source)) }).toEqual({
          name,
          volume,
          exists: true,
        });
        expect(volume.endsWith(':ro')).toBe(true);
      }
    }
  });

  it('gives the worker an environment loadConfig accepts: SASL_SSL, SCRAM-SHA-512, its own user, secrets from files', () => {
    const config = workerConfig();
    expect(config.KAFKA_BROKERS).toEqual(['kafka:29092']);
    expect(config.KAFKA_SSL).toBe(true);
    expect(readFileSync(required(config.KAFKA_SSL_CA_FILE, 'KAFKA_SSL_CA_FILE'), 'utf8')).toBe(
      readFileSync(join(variant.generated, 'certs/ca.pem'), 'utf8'),
    );
    expect(config.KAFKA_SASL_MECHANISM).toBe('scram-sha-512');
    expect(config.KAFKA_SASL_USERNAME).toBe('payflow-bridge-worker');
    expect(config.KAFKA_SASL_PASSWORD).toBe(variant.secretValue('kafka-worker-password'));
    expect(config.DATABASE_PASSWORD).toBe(variant.secretValue('database-password'));
    expect(config.PAYFLOW_CLIENT_SECRET).toBe(variant.secretValue('payflow-client-secret'));
    expect(config.PAYFLOW_CLIENT_SECRET_FILE).toBe(
      variant.hostPath(required(variant.merged.secrets?.['payflow-client-secret'], 'secret').file),
    );
    const env = service('worker').environment ?? {};
    expect(env).toMatchObject({
      KAFKA_SASL_PASSWORD_FILE: '/run/secrets/kafka-worker-password',
      DATABASE_PASSWORD_FILE: '/run/secrets/database-password',
      PAYFLOW_CLIENT_SECRET_FILE: '/run/secrets/payflow-client-secret',
    });
    expect(service('worker').depends_on).toMatchObject({
      'kafka-acl-init': { condition: 'service_completed_successfully' },
      'kafka-init': { condition: 'service_completed_successfully' },
      postgres: { condition: 'service_healthy' },
    });
    // Postgres takes the same password, from the same secret.
    expect(service('postgres').environment).toMatchObject({
      POSTGRES_PASSWORD_FILE: '/run/secrets/database-password',
      POSTGRES_HOST_AUTH_METHOD: 'scram-sha-256',
    });
    expect(service('postgres').secrets).toContain('database-password');
  });

  it('gives the sandbox’s built-in client the worker’s Payflow client secret, from the same file', () => {
    const sandbox = parseSandboxEnv(variant.envOnHost('sandbox'));
    if (!sandbox.ok) throw new Error(sandbox.error);
    const file = required(sandbox.env.SANDBOX_CLIENT_SECRET_FILE, 'SANDBOX_CLIENT_SECRET_FILE');
    expect(readFileSync(file, 'utf8').replace(/\n$/, '')).toBe(
      workerConfig().PAYFLOW_CLIENT_SECRET,
    );
    expect(workerConfig().PAYFLOW_CLIENT_ID).toBe('sandbox-client');
  });

  it('creates the topics the worker checks with the worker’s CLI, as admin over SASL_SSL', () => {
    const init = service('kafka-init');
    const command = init.command ?? [];
    expect(command.slice(0, 4)).toEqual(['node', 'dist/src/cli/main.js', 'topics', 'create']);
    const cli = loadCliConfig(variant.envOnHost('kafka-init'));
    const worker = workerConfig();
    expect(cli.KAFKA_BROKERS).toEqual(worker.KAFKA_BROKERS);
    expect(cli.KAFKA_SSL).toBe(true);
    expect(cli.KAFKA_SASL_MECHANISM).toBe('scram-sha-512');
    expect(cli.KAFKA_SASL_USERNAME).toBe('admin');
    expect(cli.KAFKA_SASL_PASSWORD).toBe(variant.secretValue('kafka-admin-password'));
    const partitions = Number(command[command.indexOf('--partitions') + 1]);
    const specs = topicSpecs(cli, { partitions, replicationFactor: 1 });
    expect(specs.map((spec) => spec.name)).toEqual(requiredTopics(worker));
  });

  describe('the broker', () => {
    let properties: Map<string, string>;
    let configFile: string;

    beforeAll(() => {
      const kafka = service('kafka');
      configFile = join(variant.generated, 'broker.properties');
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        ...Object.fromEntries(
          Object.entries(kafka.environment ?? {}).map(([key, value]) => [key, String(value)]),
        ),
        BROKER_CONFIG: configFile,
        BROKER_TLS_CERT_FILE: variant.fileOf('kafka', '/etc/payflow-bridge/kafka.pem'),
        BROKER_TLS_KEY_FILE: variant.fileOf('kafka', '/run/secrets/kafka-tls-key'),
        BROKER_TLS_CA_FILE: variant.fileOf('kafka', '/etc/payflow-bridge/kafka-ca.pem'),
        BROKER_RENDER_ONLY: '1',
      };
      const script = variant.fileOf('kafka', required(kafka.command?.[1], 'command'));
      execFileSync('bash', [script], { env, stdio: 'pipe' });
      properties = readProperties(readFileSync(configFile, 'utf8'));
    });

    function property(name: string): string {
      return required(properties.get(name), `broker property ${name}`);
    }

    it('is the same apache/kafka image as the open variant, started by the mounted script', () => {
      expect(service('kafka').image).toBe(variant.base.compose.services.kafka?.image);
      expect(service('kafka').image).toBe('apache/kafka:3.9.1');
      expect(service('kafka').command).toEqual([
        '/bin/bash',
        '/opt/payflow-bridge/kafka-broker.sh',
      ]);
      expect(statSync(configFile).mode & 0o777).toBe(0o600);
    });

    it('speaks SASL_SSL on every listener a client can reach; PLAINTEXT only on loopback', () => {
      const protocols = new Map(
        property('listener.security.protocol.map')
          .split(',')
          .map((entry) => entry.split(':') as [string, string]),
      );
      const listeners = listenersOf(property('listeners'));
      for (const [name, { host }] of listeners) {
        const protocol = protocols.get(name);
        expect({ name, host, protocol }).toEqual(
          host === '127.0.0.1'
            ? { name, host, protocol: expect.stringMatching(/^(PLAINTEXT|SASL_SSL)$/) }
            : { name, host, protocol: 'SASL_SSL' },
        );
      }
      // Where the worker connects, and the port published to the host, are SASL_SSL.
      const advertised = listenersOf(property('advertised.listeners'));
      const worker = workerConfig();
      for (const broker of worker.KAFKA_BROKERS) {
        const [host, port] = broker.split(':');
        const name = [...advertised].find(([, at]) => at.host === host && at.port === port)?.[0];
        expect(protocols.get(required(name, `advertised ${broker}`))).toBe('SASL_SSL');
      }
      for (const published of service('kafka').ports ?? []) {
        const port = published.split(':').at(-1);
        const name = [...listeners].find(([, at]) => at.port === port)?.[0];
        expect(protocols.get(required(name, `listener on ${published}`))).toBe('SASL_SSL');
      }
      expect(protocols.get(property('inter.broker.listener.name'))).toBe('PLAINTEXT');
      expect(listeners.get(property('inter.broker.listener.name'))?.host).toBe('127.0.0.1');
      expect(listeners.get(property('controller.listener.names'))?.host).toBe('127.0.0.1');
      // The health check needs no credentials: it asks on the loopback listener.
      expect(service('kafka').healthcheck?.test?.join(' ')).toContain(
        `127.0.0.1:${listeners.get(property('inter.broker.listener.name'))?.port ?? ''}`,
      );
    });

    it('authenticates with SCRAM-SHA-512 on each SASL_SSL listener, with PEM key and trust stores', () => {
      expect(property('sasl.enabled.mechanisms')).toBe('SCRAM-SHA-512');
      const protocols = property('listener.security.protocol.map').split(',');
      const sasl = protocols
        .filter((entry) => entry.endsWith(':SASL_SSL'))
        .map((entry) => entry.split(':')[0]?.toLowerCase() ?? '');
      expect(sasl.length).toBeGreaterThanOrEqual(2);
      for (const name of sasl) {
        expect(property(`listener.name.${name}.scram-sha-512.sasl.jaas.config`)).toBe(
          'org.apache.kafka.common.security.scram.ScramLoginModule required;',
        );
      }
      expect(property('ssl.keystore.type')).toBe('PEM');
      expect(property('ssl.truststore.type')).toBe('PEM');
      expect(property('ssl.keystore.certificate.chain')).toBe(
        readFileSync(join(variant.generated, 'certs/kafka.pem'), 'utf8').trim(),
      );
      expect(property('ssl.keystore.key')).toBe(
        readFileSync(join(variant.generated, 'certs/kafka.key'), 'utf8').trim(),
      );
      expect(property('ssl.truststore.certificates')).toBe(
        readFileSync(join(variant.generated, 'certs/ca.pem'), 'utf8').trim(),
      );
      // Kafka refuses a PEM store with a store password; none is set.
      expect(properties.has('ssl.keystore.password')).toBe(false);
      expect(properties.has('ssl.keystore.location')).toBe(false);
    });

    it('authorizes with StandardAuthorizer: nothing is allowed without an ACL; the worker is no super user', () => {
      expect(property('authorizer.class.name')).toBe(
        'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      );
      expect(property('allow.everyone.if.no.acl.found')).toBe('false');
      const superUsers = property('super.users').split(';');
      expect(superUsers).toEqual(['User:admin', 'User:ANONYMOUS']);
      expect(superUsers).not.toContain(`User:${workerConfig().KAFKA_SASL_USERNAME ?? ''}`);
      expect(property('auto.create.topics.enable')).toBe('false');
    });
  });

  describe('kafka-acl-init', () => {
    let invocations: Invocation[];

    beforeAll(() => {
      const tools = recordingKafkaTools(join(variant.generated, 'tools'));
      const init = service('kafka-acl-init');
      const script = variant.fileOf(
        'kafka-acl-init',
        required(init.command?.[1], 'kafka-acl-init command'),
      );
      execFileSync('bash', [script], {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          ...variant.envOnHost('kafka-acl-init'),
          INIT_KAFKA_BIN: tools.bin,
          INIT_TLS_CA_FILE: variant.fileOf('kafka-acl-init', '/etc/payflow-bridge/kafka-ca.pem'),
          INIT_ADMIN_PASSWORD_FILE: variant.fileOf(
            'kafka-acl-init',
            '/run/secrets/kafka-admin-password',
          ),
          INIT_WORKER_PASSWORD_FILE: variant.fileOf(
            'kafka-acl-init',
            '/run/secrets/kafka-worker-password',
          ),
        },
        stdio: 'pipe',
      });
      invocations = tools.invocations();
    });

    it('runs on the broker’s image, after the broker is up, before the worker', () => {
      const init = service('kafka-acl-init');
      expect(init.image).toBe(service('kafka').image);
      expect(init.depends_on).toEqual({ kafka: { condition: 'service_healthy' } });
      expect(init.environment).toMatchObject({ INIT_BOOTSTRAP_SERVER: 'kafka:29092' });
    });

    it('talks to the broker as admin over SASL_SSL, verifying its certificate', () => {
      expect(invocations.length).toBeGreaterThan(0);
      const worker = workerConfig();
      for (const invocation of invocations) {
        expect(flag(invocation, '--bootstrap-server')).toBe(worker.KAFKA_BROKERS[0]);
        const config = readProperties(
          invocation.files[required(flag(invocation, '--command-config'), 'command config')] ?? '',
        );
        expect(Object.fromEntries(config)).toEqual({
          'security.protocol': 'SASL_SSL',
          'sasl.mechanism': 'SCRAM-SHA-512',
          'sasl.jaas.config': `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="${variant.secretValue('kafka-admin-password')}";`,
          'ssl.truststore.type': 'PEM',
          'ssl.truststore.location': variant.fileOf(
            'kafka-acl-init',
            '/etc/payflow-bridge/kafka-ca.pem',
          ),
        });
      }
    });

    it('creates the worker’s SCRAM-SHA-512 user with the password the worker is given', () => {
      const worker = workerConfig();
      const configs = invocations.filter((invocation) => invocation.tool === 'kafka-configs.sh');
      expect(configs).toHaveLength(1);
      const [user] = configs;
      const invocation = required(user, 'kafka-configs.sh');
      expect(flag(invocation, '--entity-type')).toBe('users');
      expect(flag(invocation, '--entity-name')).toBe(worker.KAFKA_SASL_USERNAME);
      expect(invocation.args).toContain('--alter');
      expect(invocation.files[required(flag(invocation, '--add-config-file'), 'file')]).toBe(
        `SCRAM-SHA-512=iterations=8192,password=${worker.KAFKA_SASL_PASSWORD ?? ''}\n`,
      );
      // The password never on a command line.
      expect(invocation.args.join(' ')).not.toContain(worker.KAFKA_SASL_PASSWORD ?? '');
    });

    it('grants exactly the worker’s ACLs of CONTRACT §9, and nothing more', () => {
      const worker = workerConfig();
      const principal = `User:${worker.KAFKA_SASL_USERNAME ?? ''}`;
      const acls = invocations.filter(
        (invocation) => invocation.tool === 'kafka-acls.sh' && invocation.args.includes('--add'),
      );
      const granted = acls.map((invocation) => {
        // Only ALLOW, for the worker, on one literal topic or group, one operation at a time.
        const names = invocation.args.filter((arg) => arg.startsWith('--'));
        expect(names.sort()).toEqual(
          [
            '--add',
            '--allow-host',
            '--allow-principal',
            '--bootstrap-server',
            '--command-config',
            '--operation',
            '--resource-pattern-type',
            invocation.args.includes('--topic') ? '--topic' : '--group',
          ].sort(),
        );
        expect(flag(invocation, '--allow-principal')).toBe(principal);
        expect(flag(invocation, '--allow-host')).toBe('*');
        expect(flag(invocation, '--resource-pattern-type')).toBe('literal');
        const resource = invocation.args.includes('--topic') ? 'topic' : 'group';
        return `${resource} ${flag(invocation, `--${resource}`) ?? ''} ${flag(invocation, '--operation') ?? ''}`;
      });
      const dlq = deadLetterTopicFor(worker.TOPIC_ORDERS);
      expect(granted.sort()).toEqual(
        [
          `group ${worker.KAFKA_GROUP_ID} Read`,
          `topic ${worker.TOPIC_ORDERS} Read`,
          `topic ${worker.TOPIC_ORDERS} Describe`,
          `topic ${dlq} Write`,
          `topic ${dlq} Describe`,
          `topic ${worker.TOPIC_PAYMENT_STATUS} Write`,
          `topic ${worker.TOPIC_PAYMENT_STATUS} Describe`,
          `topic ${worker.TOPIC_SETTLEMENTS} Write`,
          `topic ${worker.TOPIC_SETTLEMENTS} Describe`,
        ].sort(),
      );
      // Whatever else it runs only reads (the final listing).
      const others = invocations.filter(
        (invocation) => invocation.tool === 'kafka-acls.sh' && !invocation.args.includes('--add'),
      );
      for (const invocation of others) {
        expect(invocation.args).toContain('--list');
        expect(invocation.args).not.toContain('--remove');
      }
    });
  });

  it('writes no secret value in either YAML: every secret is a compose secret file', () => {
    const values = [
      'kafka-admin-password',
      'kafka-worker-password',
      'database-password',
      'payflow-client-secret',
    ].map((name) => variant.secretValue(name));
    const keyBody =
      readFileSync(join(variant.generated, 'certs/kafka.key'), 'utf8').split('\n')[1] ?? '';
    for (const text of [variant.base.text, variant.secured.text]) {
      for (const value of [...values, keyBody]) expect(text).not.toContain(value);
    }
    const secretName = /(PASSWORD|SECRET|TOKEN|_KEY)$/;
    // In the secured file: a secret variable is empty (unset) or points at a compose secret.
    for (const [name, s] of Object.entries(variant.secured.compose.services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        if (secretName.test(key)) expect({ name, key, value }).toEqual({ name, key, value: '' });
        if (secretName.test(key.replace(/_FILE$/, '')) && key.endsWith('_FILE')) {
          expect({ name, key, value }).toEqual({
            name,
            key,
            value: expect.stringMatching(/^\/run\/secrets\/[\w-]+$/),
          });
          expect(s.secrets).toContain(String(value).slice('/run/secrets/'.length));
        }
      }
    }
    // Merged: no service is left with a secret written in its environment.
    for (const [name, s] of Object.entries(variant.merged.services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        if (secretName.test(key)) expect({ name, key, value }).toEqual({ name, key, value: '' });
      }
    }
  });
});
