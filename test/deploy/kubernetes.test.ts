/**
 * deploy/kubernetes, checked without a cluster: the base and the SASL_SSL overlay are rendered
 * with `kubectl kustomize` (kubectl is the only tool; no API server is asked), and then
 * - every resource of the Kubernetes API is validated against its OpenAPI schema with
 *   kubernetes-models (the schemas of the API, compiled with ajv, shipped in the package,
 *   offline); the custom resources against their CRDs' schemas from the same family of
 *   packages (@kubernetes-models/prometheus-operator for the ServiceMonitor,
 *   @kubernetes-models/keda for the KEDA overlay's ScaledObject and TriggerAuthentication);
 * - a broken Deployment is shown to fail that validation, so that it can fail;
 * - the pods are hardened (non-root uid 1000 as the Dockerfile's `USER node`, read-only root
 *   filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp), probe the
 *   management port, take every secret as a file, and the worker does not migrate itself: a
 *   Job does, and a PodDisruptionBudget, both Services, the NetworkPolicy and the
 *   ServiceMonitor are there;
 * - the worker's environment, with its secret files made, loads with loadConfig.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/app-config.js';
import { DEFAULT_TOPIC_PARTITIONS } from '../../src/messaging/kafka/topics.port.js';
import { SHUTDOWN_DEADLINE_MS } from '../../src/worker.js';

const ROOT = join(import.meta.dirname, '..', '..');
const KUBERNETES = join(ROOT, 'deploy', 'kubernetes');
const MANAGEMENT_PORT = 9464;
const PUBLIC_PORT = 3000;
/** kubectl (Debian's package, or KUBECTL): `kubectl kustomize` renders, no cluster is asked. */
const KUBECTL = process.env.KUBECTL ?? 'kubectl';
/** The Dockerfile's `USER node` in node:20-bookworm-slim. */
const NODE_UID = 1000;

/** A rendered resource, as plain data. */
interface Resource {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly [field: string]: unknown;
}

/** The API models the manifests may use: `apiVersion kind` → a model that validates. */
type Model = new (data: never) => { validate(): void };
const MODELS: Readonly<Record<string, Model>> = {
  'apps/v1 Deployment': Deployment,
  'batch/v1 Job': Job,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'v1 ConfigMap': ConfigMap,
  'v1 Service': Service,
  'v1 ServiceAccount': ServiceAccount,
  'monitoring.coreos.com/v1 ServiceMonitor': ServiceMonitor,
  'keda.sh/v1alpha1 ScaledObject': ScaledObject,
  'keda.sh/v1alpha1 TriggerAuthentication': TriggerAuthentication,
};

function kustomize(dir: string): Promise<Resource[]> {
  return new Promise((resolve, reject) => {
    execFile(
      KUBECTL,
      ['kustomize', dir],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error !== null) {
          reject(new Error(`kubectl kustomize ${dir} failed: ${stderr}`));
          return;
        }
        resolve(
          parseAllDocuments(stdout).map((document) => {
            if (document.errors.length > 0) throw new Error(String(document.errors[0]));
            return document.toJS() as Resource;
          }),
        );
      },
    );
  });
}

/** Validates one resource against its API schema; throws with ajv's errors when it is invalid. */
function validate(resource: Resource): void {
  const key = `${resource.apiVersion} ${resource.kind}`;
  const model = MODELS[key];
  if (model === undefined) throw new Error(`no schema for ${key} (${resource.metadata.name})`);
  new model(resource as never).validate();
}

function only(resources: readonly Resource[], kind: string, name?: string): Resource {
  const found = resources.filter(
    (r) => r.kind === kind && (name === undefined || r.metadata.name === name),
  );
  if (found.length !== 1)
    throw new Error(`expected one ${kind} ${name ?? ''}, found ${found.length}`);
  return found[0] as Resource;
}

interface Probe {
  readonly httpGet?: { readonly path: string; readonly port: string | number };
}
interface Container {
  readonly name: string;
  readonly image: string;
  readonly command?: readonly string[];
  readonly ports?: readonly { readonly name: string; readonly containerPort: number }[];
  readonly env?: readonly {
    readonly name: string;
    readonly value?: string;
    readonly valueFrom?: Record<string, unknown>;
  }[];
  readonly envFrom?: readonly Record<string, unknown>[];
  readonly securityContext?: Record<string, unknown>;
  readonly resources?: {
    readonly requests?: Record<string, string>;
    readonly limits?: Record<string, string>;
  };
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string }[];
  readonly livenessProbe?: Probe;
  readonly readinessProbe?: Probe;
  readonly startupProbe?: Probe;
}
interface PodSpec {
  readonly securityContext?: Record<string, unknown>;
  readonly terminationGracePeriodSeconds?: number;
  readonly automountServiceAccountToken?: boolean;
  readonly initContainers?: readonly Container[];
  readonly containers: readonly Container[];
  readonly volumes?: readonly {
    readonly name: string;
    readonly secret?: { readonly secretName: string };
    readonly emptyDir?: object;
  }[];
}

function podSpec(resource: Resource): PodSpec {
  return (resource.spec as { template: { spec: PodSpec } }).template.spec;
}

/** The port number a probe names (by name, through the container's ports, or by number). */
function probePort(container: Container, probe: Probe | undefined): number | undefined {
  const port = probe?.httpGet?.port;
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

const temporary = mkdtempSync(join(tmpdir(), 'payflow-k8s-'));
afterAll(() => rmSync(temporary, { recursive: true, force: true }));

const KEDA_OVERLAY = join(KUBERNETES, 'overlays', 'keda');

describe.each([
  ['the base', KUBERNETES, []],
  ['the SASL_SSL overlay', join(KUBERNETES, 'overlays', 'sasl-ssl'), []],
  [
    'the KEDA overlay',
    KEDA_OVERLAY,
    ['ScaledObject/payflow-bridge', 'TriggerAuthentication/payflow-bridge-kafka'],
  ],
])('deploy/kubernetes: %s', (_label, dir, extra: readonly string[]) => {
  let rendered: Promise<Resource[]> | undefined;
  const resources = (): Promise<Resource[]> => (rendered ??= kustomize(dir));

  it('renders, and every resource is valid against the Kubernetes API schemas', async () => {
    const all = await resources();
    expect(all.map((r) => `${r.kind}/${r.metadata.name}`).sort()).toEqual(
      [
        'ConfigMap/payflow-bridge',
        'Deployment/payflow-bridge',
        'Job/payflow-bridge-migrate',
        'NetworkPolicy/payflow-bridge',
        'PodDisruptionBudget/payflow-bridge',
        'Service/payflow-bridge',
        'Service/payflow-bridge-management',
        'ServiceAccount/payflow-bridge',
        'ServiceMonitor/payflow-bridge',
        ...extra,
      ].sort(),
    );
    for (const resource of all) {
      expect(() => validate(resource)).not.toThrow();
    }
  });

  it('runs hardened pods: non-root uid 1000, read-only root, no escalation, no capabilities', async () => {
    const all = await resources();
    for (const owner of [only(all, 'Deployment'), only(all, 'Job')]) {
      const pod = podSpec(owner);
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: NODE_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        expect(container.securityContext).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(container.resources?.requests).toBeDefined();
        expect(container.resources?.limits?.memory).toBeDefined();
        // The root filesystem is read-only: /tmp is an emptyDir.
        const tmp = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
        expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
      }
    }
  });

  it('probes the management port, and outlasts the drain on shutdown', async () => {
    const deployment = only(await resources(), 'Deployment');
    // Two replicas; under KEDA the HorizontalPodAutoscaler owns the count (at least two).
    const replicas = (deployment.spec as { replicas?: number }).replicas;
    if (dir === KEDA_OVERLAY) expect(replicas).toBeUndefined();
    else expect(replicas).toBe(2);
    const pod = podSpec(deployment);
    const worker = pod.containers.find((c) => c.name === 'worker') as Container;
    expect(worker.livenessProbe?.httpGet?.path).toBe('/health/live');
    expect(worker.readinessProbe?.httpGet?.path).toBe('/health/ready');
    for (const probe of [worker.livenessProbe, worker.readinessProbe, worker.startupProbe]) {
      expect(probePort(worker, probe)).toBe(MANAGEMENT_PORT);
    }
    expect(worker.ports?.map((p) => p.containerPort).sort()).toEqual([
      PUBLIC_PORT,
      MANAGEMENT_PORT,
    ]);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(SHUTDOWN_DEADLINE_MS / 1000);
  });

  it('takes every secret as a file from a Secret, never as a variable', async () => {
    const all = await resources();
    for (const owner of [only(all, 'Deployment'), only(all, 'Job')]) {
      const pod = podSpec(owner);
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        for (const source of container.envFrom ?? [])
          expect(source).not.toHaveProperty('secretRef');
        for (const variable of container.env ?? []) {
          expect(variable.valueFrom ?? {}).not.toHaveProperty('secretKeyRef');
          if (variable.name.endsWith('_FILE') && variable.name !== 'KAFKA_SSL_CA_FILE') {
            // The file lies under a mount of a Secret volume.
            const mount = container.volumeMounts?.find((m) =>
              (variable.value ?? '').startsWith(`${m.mountPath}/`),
            );
            expect(pod.volumes?.find((v) => v.name === mount?.name)?.secret).toBeDefined();
          }
        }
      }
    }
    const worker = podSpec(only(all, 'Deployment')).containers[0] as Container;
    const names = (worker.env ?? []).map((v) => v.name);
    expect(names).toEqual(
      expect.arrayContaining(['DATABASE_PASSWORD_FILE', 'PAYFLOW_CLIENT_SECRET_FILE']),
    );
    // No secret in the ConfigMap: no password in DATABASE_URL, no secret variable.
    const data = (only(all, 'ConfigMap').data ?? {}) as Record<string, string>;
    expect(new URL(data.DATABASE_URL ?? '').password).toBe('');
    expect(Object.keys(data).filter((k) => /SECRET|PASSWORD|TOKEN$/.test(k))).toEqual([]);
  });

  it('migrates in a Job, not in the worker, which waits for it', async () => {
    const all = await resources();
    const job = podSpec(only(all, 'Job', 'payflow-bridge-migrate'));
    const deployment = podSpec(only(all, 'Deployment'));
    const worker = deployment.containers[0] as Container;
    expect(job.containers[0]?.command).toEqual(['node', 'dist/src/database/migrate.js']);
    expect(job.containers[0]?.image).toBe(worker.image);
    expect((only(all, 'ConfigMap').data as Record<string, string>).DB_MIGRATE).toBe('false');
    expect(deployment.initContainers?.map((c) => c.command)).toEqual([
      ['node', 'dist/src/database/migrate.js'],
    ]);
  });

  it('keeps one worker through disruptions and the management port private', async () => {
    const all = await resources();
    expect(only(all, 'PodDisruptionBudget').spec).toMatchObject({ minAvailable: 1 });
    const management = only(all, 'Service', 'payflow-bridge-management').spec as {
      type: string;
      ports: { port: number }[];
    };
    expect(management).toMatchObject({ type: 'ClusterIP', ports: [{ port: MANAGEMENT_PORT }] });
    const policy = only(all, 'NetworkPolicy').spec as {
      ingress: { from: object[]; ports: { port: string }[] }[];
    };
    const managementRules = policy.ingress.filter((rule) =>
      rule.ports.some((p) => p.port === 'management'),
    );
    expect(managementRules).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
          },
        ],
        ports: [{ port: 'management', protocol: 'TCP' }],
      },
    ]);
    expect(only(all, 'ServiceMonitor').spec).toMatchObject({
      endpoints: [{ port: 'management', path: '/metrics' }],
    });
  });

  it('gives the worker an environment its configuration accepts (secret files made)', async () => {
    const all = await resources();
    const worker = podSpec(only(all, 'Deployment')).containers[0] as Container;
    const env: Record<string, string> = {
      ...((only(all, 'ConfigMap').data ?? {}) as Record<string, string>),
    };
    for (const variable of worker.env ?? []) {
      if (variable.value === undefined) continue;
      if (variable.name.endsWith('_FILE')) {
        const file = join(temporary, variable.name);
        writeFileSync(file, `secret-of-${variable.name}\n`);
        env[variable.name] = file;
      } else {
        env[variable.name] = variable.value;
      }
    }
    const config = loadConfig(env);
    expect(config.DB_MIGRATE).toBe(false);
    expect(config.MANAGEMENT_PORT).toBe(MANAGEMENT_PORT);
    expect(config.HTTP_PORT).toBe(PUBLIC_PORT);
  });
});

describe("deploy/kubernetes: the KEDA overlay scales on the lag of the worker's own group", () => {
  it('targets the Deployment, its group, topic and brokers, within the partitions', async () => {
    const all = await kustomize(KEDA_OVERLAY);
    const config = (only(all, 'ConfigMap').data ?? {}) as Record<string, string>;
    const scaled = only(all, 'ScaledObject').spec as {
      scaleTargetRef: { name: string };
      minReplicaCount: number;
      maxReplicaCount: number;
      triggers: {
        type: string;
        authenticationRef: { name: string };
        metadata: Record<string, string>;
      }[];
    };
    expect(scaled.scaleTargetRef.name).toBe(only(all, 'Deployment').metadata.name);
    expect(scaled.minReplicaCount).toBeGreaterThanOrEqual(
      (only(all, 'PodDisruptionBudget').spec as { minAvailable: number }).minAvailable + 1,
    );
    // More replicas than partitions would sit idle.
    expect(scaled.maxReplicaCount).toBeLessThanOrEqual(DEFAULT_TOPIC_PARTITIONS);
    expect(scaled.triggers).toHaveLength(1);
    const trigger = scaled.triggers[0] as (typeof scaled.triggers)[number];
    expect(trigger.type).toBe('kafka');
    expect(trigger.metadata).toMatchObject({
      bootstrapServers: config.KAFKA_BROKERS,
      consumerGroup: config.KAFKA_GROUP_ID,
      topic: config.TOPIC_ORDERS,
      // KEDA spells the worker's scram-sha-512 as scram_sha512.
      sasl: (config.KAFKA_SASL_MECHANISM ?? '').replace(/^scram-sha-/, 'scram_sha'),
      tls: 'enable',
      allowIdleConsumers: 'false',
    });
    expect(trigger.authenticationRef.name).toBe(only(all, 'TriggerAuthentication').metadata.name);
  });

  it("authenticates with the worker's own Kafka user and the Secrets its pods mount", async () => {
    const all = await kustomize(KEDA_OVERLAY);
    const auth = only(all, 'TriggerAuthentication').spec as {
      env: { parameter: string; name: string; containerName: string }[];
      secretTargetRef: { parameter: string; name: string; key: string }[];
    };
    const pod = podSpec(only(all, 'Deployment'));
    const config = (only(all, 'ConfigMap').data ?? {}) as Record<string, string>;
    for (const variable of auth.env) {
      expect(pod.containers.map((c) => c.name)).toContain(variable.containerName);
      expect(config[variable.name]).toBeDefined();
    }
    const mounted = (pod.volumes ?? []).map((v) => v.secret?.secretName);
    for (const reference of auth.secretTargetRef) expect(mounted).toContain(reference.name);
    expect(auth.secretTargetRef.map((r) => r.parameter).sort()).toEqual(['ca', 'password']);
  });
});

describe('the validation of deploy/kubernetes', () => {
  it('fails a broken Deployment: a string for replicas, a container without a name', async () => {
    const deployment = only(await kustomize(KUBERNETES), 'Deployment');
    const spec = deployment.spec as { template: { spec: PodSpec } };
    expect(() => validate({ ...deployment, spec: { ...spec, replicas: 'two' } })).toThrow(
      /replicas must be integer/,
    );
    const nameless = spec.template.spec.containers.map(({ name: _name, ...rest }) => rest);
    const broken = {
      ...spec,
      template: { ...spec.template, spec: { ...spec.template.spec, containers: nameless } },
    };
    expect(() => validate({ ...deployment, spec: broken })).toThrow(/name/);
    expect(() => validate({ ...deployment, kind: 'Deploymnet' })).toThrow(/no schema/);
  });

  it('fails broken custom resources against their CRD schemas', async () => {
    const all = await kustomize(KEDA_OVERLAY);
    const scaled = only(all, 'ScaledObject');
    const spec = scaled.spec as Record<string, unknown>;
    expect(() => validate({ ...scaled, spec: { ...spec, minReplicaCount: 'two' } })).toThrow(
      /minReplicaCount/,
    );
    const { scaleTargetRef: _target, ...untargeted } = spec;
    expect(() => validate({ ...scaled, spec: untargeted })).toThrow(/scaleTargetRef/);
    const monitor = only(all, 'ServiceMonitor');
    const monitorSpec = monitor.spec as Record<string, unknown>;
    expect(() =>
      validate({ ...monitor, spec: { ...monitorSpec, endpoints: [{ port: 9464 }] } }),
    ).toThrow(/port/);
  });
});
