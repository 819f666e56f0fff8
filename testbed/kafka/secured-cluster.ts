/**
 * A secured one-node Apache Kafka (KRaft) for the security tests: TLS, SASL, mutual TLS and
 * ACLs enforced, with a CA made for the run. Each test file that needs it starts its own
 * (about 5 s, one JVM of 320 MB heap) and stops it at the end. No test-framework imports.
 *
 * Listeners (each on its own free 127.0.0.1 port):
 * - `SASL_SSL` (clients): SASL mechanisms PLAIN, SCRAM-SHA-512 and OAUTHBEARER; SCRAM-SHA-256
 *   is deliberately NOT enabled (the "wrong mechanism" case). SCRAM users are created by
 *   `StorageTool format --add-scram`; PLAIN users are in the listener's JAAS config (the same
 *   name and password as the SCRAM user); OAUTHBEARER uses Kafka's unsecured JWT validator
 *   (any `alg: none` JWT with `sub` and `exp`; the principal is `User:<sub>`).
 * - `SSL` (clients, mutual TLS): `ssl.client.auth=required`; the principal is the client
 *   certificate's CN (`User:<CN>`).
 * - `PLAINTEXT` (controller and readiness probe only): its principal `User:ANONYMOUS` is a
 *   super user, so tests must never point the code under test at it.
 * Both TLS listeners present a server certificate for 127.0.0.1/localhost signed by `ca`, in
 * PEM key and trust stores. `StandardAuthorizer` with `allow.everyone.if.no.acl.found=false`;
 * super users: `User:admin` and `User:ANONYMOUS` (the PLAINTEXT controller/inter-broker side).
 *
 * API:
 * - `SecuredKafkaCluster.start(options?)` → a running cluster; `stop()` kills it and deletes
 *   its folder. `SecuredKafkaCluster.attach(descriptorPath)` from another process (the
 *   descriptor is `<root>/secured.json`; `cluster.descriptorPath` is the KRaft one).
 * - `brokers.saslSsl`, `brokers.ssl`, `brokers.plaintext`: host:port lists per listener.
 * - `caFile` (the CA the brokers' certificate is signed by), `otherCaFile` (an unrelated CA:
 *   the "untrusted CA" case), both PEM files.
 * - `users`: name → password (SCRAM-SHA-512 and PLAIN), `password(name)` one of them;
 *   `admin` is a super user, the others (default `worker`, `operator`; `options.users`) have
 *   no ACL until granted one.
 * - `options.reauthMs`: the brokers' `connections.max.reauth.ms` (clients re-authenticate,
 *   an OAUTHBEARER session ends with its token); `options.properties`: more broker settings.
 * - `clientCertificate(cn)`: a client certificate signed by the CA, as `{ certFile, keyFile }`;
 *   `untrustedClientCertificate(cn)`: the same, signed by the unrelated CA.
 * - `adminConfig()`: a kafkajs `KafkaConfig` of the super user `admin` over SASL_SSL
 *   (SCRAM-SHA-512, verifying the brokers' certificate); `withAdmin(use)` runs with one.
 * - `grantAcls(principal, acls)`, `revokeAcl(principal, acl)`, `restoreAcl(principal, acl)`,
 *   `aclsOf(principal)`: ACLs (src/messaging/security/kafka-acls.ts `KafkaAcl`, ALLOW, host `*`,
 *   literal names) of a principal such as `User:worker`, through the admin client; each
 *   resolves once the broker's authorizer lists the change. `grantWorkerAcls(principal,
 *   config)` grants exactly `workerAcls(config)`.
 * - `createTopics(names, partitions)`: as the admin, waiting for leaders.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  Kafka,
  logLevel,
  ResourcePatternTypes,
  type AclEntry,
  type Admin,
  type KafkaConfig,
} from 'kafkajs';
import {
  workerAcls,
  type KafkaAcl,
  type KafkaAclConfig,
  type KafkaAclOperation,
  type KafkaAclResourceType,
} from '../../src/messaging/security/kafka-acls.js';
import { createTopicsAndWait } from '../../src/messaging/kafka/kafka.topics.js';
import { issueCertificate, makeTestPki, type Pem } from '../pki.js';
import { KraftCluster } from './kraft-cluster.js';

export interface SecuredKafkaOptions {
  /** Parent of the cluster's root folder. Default: the OS temporary folder. */
  readonly parentDir?: string;
  /** Maximum heap of the JVM in MB. Default 320. */
  readonly heapMb?: number;
  /** SCRAM-SHA-512 and PLAIN users besides `admin`. Default `['worker', 'operator']`. */
  readonly users?: readonly string[];
  /**
   * The brokers' `connections.max.reauth.ms`: a client must authenticate again within this
   * long (an OAUTHBEARER session also ends when its token expires). Default: unset (never).
   */
  readonly reauthMs?: number;
  /** More broker properties (they win). */
  readonly properties?: Readonly<Record<string, string | number | boolean>>;
}

export interface SecuredBrokers {
  readonly saslSsl: readonly string[];
  readonly ssl: readonly string[];
  readonly plaintext: readonly string[];
}

export interface ClientCertificateFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

interface SecuredDescriptor {
  readonly kraftDescriptor: string;
  readonly root: string;
  readonly brokers: SecuredBrokers;
  readonly caFile: string;
  readonly caKeyFile: string;
  readonly otherCaFile: string;
  readonly otherCaKeyFile: string;
  readonly users: Readonly<Record<string, string>>;
}

export const SECURED_SUPER_USERS = ['User:admin', 'User:ANONYMOUS'] as const;

export class SecuredKafkaCluster {
  private constructor(
    readonly cluster: KraftCluster,
    private readonly descriptor: SecuredDescriptor,
  ) {}

  static async start(options: SecuredKafkaOptions = {}): Promise<SecuredKafkaCluster> {
    const pki = await makeTestPki();
    const server = await pki.server('kafka-broker', ['localhost', '127.0.0.1']);
    const names = ['admin', ...(options.users ?? ['worker', 'operator'])];
    // Hex passwords: nothing to escape in the JAAS config or StorageTool's `[name=,password=]`.
    const users = Object.fromEntries(names.map((name) => [name, randomBytes(12).toString('hex')]));
    const plainUsers = names.map((name) => `user_${name}="${users[name] ?? ''}"`).join(' ');
    const cluster = await KraftCluster.start({
      nodes: 1,
      heapMb: options.heapMb ?? 320,
      ...(options.parentDir === undefined ? {} : { parentDir: options.parentDir }),
      extraListeners: ['SASL_SSL', 'SSL'],
      formatArgs: names.flatMap((name) => [
        '--add-scram',
        `SCRAM-SHA-512=[name=${name},password=${users[name] ?? ''}]`,
      ]),
      nodeProperties: (node) => {
        const saslSsl = node.extraPorts?.['SASL_SSL'];
        const ssl = node.extraPorts?.['SSL'];
        if (saslSsl === undefined || ssl === undefined) throw new Error('no TLS listener ports');
        return {
          listeners:
            `PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort},` +
            `SASL_SSL://127.0.0.1:${saslSsl},SSL://127.0.0.1:${ssl}`,
          'advertised.listeners':
            `PLAINTEXT://127.0.0.1:${node.port},SASL_SSL://127.0.0.1:${saslSsl},` +
            `SSL://127.0.0.1:${ssl}`,
          'listener.security.protocol.map':
            'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL',
          'ssl.keystore.type': 'PEM',
          'ssl.keystore.certificate.chain': propertyValue(server.cert),
          'ssl.keystore.key': propertyValue(server.key),
          'ssl.truststore.type': 'PEM',
          'ssl.truststore.certificates': propertyValue(pki.ca.cert),
          'listener.name.ssl.ssl.client.auth': 'required',
          'ssl.principal.mapping.rules': 'RULE:^CN=([^,]+).*$/$1/,DEFAULT',
          'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512,OAUTHBEARER',
          'listener.name.sasl_ssl.plain.sasl.jaas.config':
            'org.apache.kafka.common.security.plain.PlainLoginModule required ' +
            `username="admin" password="${users['admin'] ?? ''}" ${plainUsers};`,
          'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config':
            'org.apache.kafka.common.security.scram.ScramLoginModule required;',
          'listener.name.sasl_ssl.oauthbearer.sasl.jaas.config':
            'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ' +
            'unsecuredLoginStringClaim_sub="admin";',
          'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
          'allow.everyone.if.no.acl.found': false,
          'super.users': SECURED_SUPER_USERS.join(';'),
          ...(options.reauthMs === undefined
            ? {}
            : { 'connections.max.reauth.ms': options.reauthMs }),
          ...(options.properties ?? {}),
        };
      },
    });
    try {
      const root = join(cluster.nodes[0]?.dir ?? '', '..');
      const files = join(root, 'pki');
      await mkdir(files, { recursive: true });
      const write = async (name: string, content: string): Promise<string> => {
        const path = join(files, name);
        await writeFile(path, content, { mode: 0o600 });
        return path;
      };
      const node = cluster.nodes[0];
      if (node === undefined) throw new Error('no node');
      const descriptor: SecuredDescriptor = {
        kraftDescriptor: cluster.descriptorPath,
        root,
        brokers: {
          saslSsl: [`127.0.0.1:${node.extraPorts?.['SASL_SSL'] ?? 0}`],
          ssl: [`127.0.0.1:${node.extraPorts?.['SSL'] ?? 0}`],
          plaintext: cluster.brokers,
        },
        caFile: await write('ca.pem', pki.ca.cert),
        caKeyFile: await write('ca.key', pki.ca.key),
        otherCaFile: await write('other-ca.pem', pki.otherCa.cert),
        otherCaKeyFile: await write('other-ca.key', pki.otherCa.key),
        users,
      };
      await writeFile(join(root, 'secured.json'), JSON.stringify(descriptor, null, 2));
      const secured = new SecuredKafkaCluster(cluster, descriptor);
      await secured.waitForAdmin();
      return secured;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** The cluster another process started, from `<root>/secured.json`. */
  static attach(descriptorPath: string): SecuredKafkaCluster {
    const descriptor = JSON.parse(readFileSync(descriptorPath, 'utf8')) as SecuredDescriptor;
    return new SecuredKafkaCluster(KraftCluster.attach(descriptor.kraftDescriptor), descriptor);
  }

  /** `<root>/secured.json`, for attach(). */
  get descriptorPath(): string {
    return join(this.descriptor.root, 'secured.json');
  }

  get brokers(): SecuredBrokers {
    return this.descriptor.brokers;
  }

  get caFile(): string {
    return this.descriptor.caFile;
  }

  get otherCaFile(): string {
    return this.descriptor.otherCaFile;
  }

  /** name → password of every SCRAM-SHA-512 / PLAIN user. */
  get users(): Readonly<Record<string, string>> {
    return this.descriptor.users;
  }

  /** The password of `name` (throws for an unknown user). */
  password(name: string): string {
    const password = this.descriptor.users[name];
    if (password === undefined) throw new Error(`no user ${name} in the secured cluster`);
    return password;
  }

  /** A client certificate with this CN signed by the brokers' CA (mutual TLS). */
  clientCertificate(commonName: string): Promise<ClientCertificateFiles> {
    return this.issueClient(commonName, this.descriptor.caFile, this.descriptor.caKeyFile, 'ok');
  }

  /** A client certificate with this CN signed by the unrelated CA (the brokers refuse it). */
  untrustedClientCertificate(commonName: string): Promise<ClientCertificateFiles> {
    return this.issueClient(
      commonName,
      this.descriptor.otherCaFile,
      this.descriptor.otherCaKeyFile,
      'untrusted',
    );
  }

  /** A kafkajs configuration of the super user `admin` (SCRAM-SHA-512 over SASL_SSL). */
  adminConfig(clientId = 'secured-test-bed-admin'): KafkaConfig {
    return {
      clientId,
      brokers: [...this.brokers.saslSsl],
      ssl: { ca: [readFileSync(this.caFile, 'utf8')], rejectUnauthorized: true },
      sasl: { mechanism: 'scram-sha-512', username: 'admin', password: this.password('admin') },
      logLevel: logLevel.NOTHING,
      connectionTimeout: 10_000,
      requestTimeout: 30_000,
    };
  }

  /** Runs `use` with a connected admin client (the super user), disconnected afterwards. */
  async withAdmin<T>(use: (admin: Admin) => Promise<T>): Promise<T> {
    const admin = new Kafka(this.adminConfig()).admin();
    await admin.connect();
    try {
      return await use(admin);
    } finally {
      await admin.disconnect();
    }
  }

  /** Creates topics as the admin (replication factor 1) and waits for their leaders. */
  async createTopics(names: readonly string[], partitions: number): Promise<void> {
    await this.withAdmin((admin) =>
      createTopicsAndWait(
        admin,
        names.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
      ),
    );
  }

  /** Grants exactly the worker's least privilege (CONTRACT §9) to `principal`. */
  grantWorkerAcls(principal: string, config: KafkaAclConfig): Promise<void> {
    return this.grantAcls(principal, workerAcls(config));
  }

  /** Grants ALLOW ACLs to `principal` (e.g. `User:worker`); resolves once they are in force. */
  async grantAcls(principal: string, acls: readonly KafkaAcl[]): Promise<void> {
    if (acls.length === 0) return;
    await this.withAdmin(async (admin) => {
      await admin.createAcls({ acl: acls.map((acl) => toKafkajsAcl(principal, acl)) });
      await waitForAcls(admin, principal, (listed) =>
        acls.every((acl) => listed.some((other) => sameAcl(acl, other))),
      );
    });
  }

  /** Withdraws one ACL of `principal`; resolves once the broker no longer lists it. */
  async revokeAcl(principal: string, acl: KafkaAcl): Promise<void> {
    await this.withAdmin(async (admin) => {
      await admin.deleteAcls({ filters: [toKafkajsAcl(principal, acl)] });
      await waitForAcls(admin, principal, (listed) =>
        listed.every((other) => !sameAcl(acl, other)),
      );
    });
  }

  /** Gives back an ACL that revokeAcl() withdrew. */
  restoreAcl(principal: string, acl: KafkaAcl): Promise<void> {
    return this.grantAcls(principal, [acl]);
  }

  /** The ALLOW ACLs of `principal` as the broker lists them now. */
  aclsOf(principal: string): Promise<KafkaAcl[]> {
    return this.withAdmin((admin) => listAcls(admin, principal));
  }

  /** Kills the broker and deletes its folder (and the CA's files). Idempotent. */
  async stop(): Promise<void> {
    await this.cluster.stop();
  }

  /** The SASL_SSL listener answers the admin (TLS and SCRAM set up). */
  private async waitForAdmin(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.withAdmin((admin) => admin.describeCluster());
        return;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(
            `secured kafka: the admin cannot connect over SASL_SSL: ${String(error)}\n` +
              this.cluster.logTail(1),
            { cause: error },
          );
        }
        await delay(250);
      }
    }
  }

  private async issueClient(
    commonName: string,
    caFile: string,
    caKeyFile: string,
    label: string,
  ): Promise<ClientCertificateFiles> {
    const ca: Pem = { cert: readFileSync(caFile, 'utf8'), key: readFileSync(caKeyFile, 'utf8') };
    const pem = await issueCertificate(ca, { commonName, usage: 'client' });
    const dir = join(this.descriptor.root, 'pki', 'clients');
    await mkdir(dir, { recursive: true });
    const base = join(dir, `${label}-${commonName}-${randomBytes(3).toString('hex')}`);
    await writeFile(`${base}.crt`, pem.cert, { mode: 0o600 });
    await writeFile(`${base}.key`, pem.key, { mode: 0o600 });
    return { certFile: `${base}.crt`, keyFile: `${base}.key` };
  }
}

/** A PEM as one properties-file value (Java's Properties reads `\n` back as a newline). */
function propertyValue(pem: string): string {
  return pem.trim().replace(/\r?\n/g, '\\n');
}

const RESOURCE_TYPES: Record<KafkaAclResourceType, AclResourceTypes> = {
  topic: AclResourceTypes.TOPIC,
  group: AclResourceTypes.GROUP,
  cluster: AclResourceTypes.CLUSTER,
};

const OPERATIONS: Record<KafkaAclOperation, AclOperationTypes> = {
  READ: AclOperationTypes.READ,
  WRITE: AclOperationTypes.WRITE,
  CREATE: AclOperationTypes.CREATE,
  DESCRIBE: AclOperationTypes.DESCRIBE,
  DESCRIBE_CONFIGS: AclOperationTypes.DESCRIBE_CONFIGS,
  IDEMPOTENT_WRITE: AclOperationTypes.IDEMPOTENT_WRITE,
};

function toKafkajsAcl(principal: string, acl: KafkaAcl): AclEntry {
  return {
    resourceType: RESOURCE_TYPES[acl.resourceType],
    resourceName: acl.resourceName,
    resourcePatternType: ResourcePatternTypes.LITERAL,
    principal,
    host: '*',
    operation: OPERATIONS[acl.operation],
    permissionType: AclPermissionTypes.ALLOW,
  };
}

function sameAcl(a: KafkaAcl, b: KafkaAcl): boolean {
  return (
    a.resourceType === b.resourceType &&
    a.resourceName === b.resourceName &&
    a.operation === b.operation
  );
}

async function listAcls(admin: Admin, principal: string): Promise<KafkaAcl[]> {
  const { resources } = await admin.describeAcls({
    resourceType: AclResourceTypes.ANY,
    resourcePatternType: ResourcePatternTypes.ANY,
    principal,
    host: '*',
    operation: AclOperationTypes.ANY,
    permissionType: AclPermissionTypes.ALLOW,
  });
  const types = Object.entries(RESOURCE_TYPES) as [KafkaAclResourceType, AclResourceTypes][];
  const operations = Object.entries(OPERATIONS) as [KafkaAclOperation, AclOperationTypes][];
  return resources.flatMap((resource) => {
    const resourceType = types.find(([, code]) => code === resource.resourceType)?.[0];
    if (resourceType === undefined) return [];
    return resource.acls.flatMap((entry) => {
      const operation = operations.find(([, code]) => code === entry.operation)?.[0];
      return operation === undefined
        ? []
        : [{ resourceType, resourceName: resource.resourceName, operation }];
    });
  });
}

async function waitForAcls(
  admin: Admin,
  principal: string,
  done: (listed: readonly KafkaAcl[]) => boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done(await listAcls(admin, principal))) {
    if (Date.now() > deadline)
      throw new Error(`ACLs of ${principal} not applied in ${timeoutMs} ms`);
    await delay(100);
  }
}
