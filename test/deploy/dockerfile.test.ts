/**
 * The image's build stage, as `docker build` runs it, on a machine without a Docker engine:
 * the paths its COPY lines name (and nothing else, minus .dockerignore) are copied into an
 * empty folder, the lockfile's node_modules stand in for `npm ci`, and the stage's compiler
 * command runs there. The image broke once because the build compiled a benchmark that
 * imported a file the Dockerfile did not copy; this fails first now.
 *
 * Then the runtime stage: its CMD and HEALTHCHECK name files the build produced, it exposes
 * the public and the management port, the compiled product imports no development
 * dependency (the image prunes them), and the healthcheck script says live or not live as
 * the worker's /health/live answers on the management port, over plain HTTP.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { builtinModules } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { generate } from 'selfsigned';
import { selfSignedTls } from '../../testbed/tls.js';
import { parseDockerfile, type DockerStage } from './dockerfile.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');

interface PackageJson {
  readonly dependencies: Record<string, string>;
  readonly devDependencies: Record<string, string>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

function stage(name: string | undefined): DockerStage {
  const found = name === undefined ? stages.at(-1) : stages.find((s) => s.name === name);
  if (found === undefined) throw new Error(`no stage ${name ?? '(last)'} in the Dockerfile`);
  return found;
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The package a bare import specifier names ('@scope/name/sub' → '@scope/name'). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

function listen(server: Server, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('the Dockerfile', () => {
  let context: string;
  let built: { code: number; output: string };

  beforeAll(async () => {
    context = mkdtempSync(join(tmpdir(), 'pfb-image-'));
    for (const copy of stage('build').copies) {
      for (const source of copy.sources) {
        const target = copy.destination.endsWith('/')
          ? join(context, source)
          : join(context, copy.destination);
        cpSync(join(ROOT, source), target, {
          recursive: true,
          filter: (path) => !ignored.some((pattern) => relative(ROOT, path) === pattern),
        });
      }
    }
    symlinkSync(join(ROOT, 'node_modules'), join(context, 'node_modules'), 'dir');
    const compile = stage('build').runs.find((line) => line.includes('tsc'));
    if (compile === undefined) throw new Error('the build stage runs no tsc');
    // Only the compiler part: `npm prune` would prune the shared node_modules.
    const [command = ''] = compile.split('&&').map((part) => part.trim());
    try {
      const { stdout, stderr } = await run('sh', ['-c', command], {
        cwd: context,
        timeout: 240_000,
      });
      built = { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      built = { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
    }
  }, 300_000);

  afterAll(() => {
    if (context !== undefined) rmSync(context, { recursive: true, force: true });
  });

  it('builds its build stage from exactly the paths it copies', () => {
    expect(built.output).toBe('');
    expect(built.code).toBe(0);
    for (const entry of [
      'src/main.js',
      'src/cli/main.js',
      'src/sandbox/main.js',
      'src/healthcheck.js',
    ]) {
      expect(existsSync(join(context, 'dist', entry))).toBe(true);
    }
    expect(jsFiles(join(context, 'dist', 'migrations')).length).toBeGreaterThan(0);
  });

  it('starts and checks the container with files the build produced', () => {
    const runtime = stage(undefined);
    expect(runtime.copies.map((copy) => copy.from)).toEqual(['build', 'build', 'build']);
    expect(runtime.cmd).toEqual(['node', 'dist/src/main.js']);
    expect(runtime.healthcheck).toEqual(['node', 'dist/src/healthcheck.js']);
    for (const command of [runtime.cmd, runtime.healthcheck]) {
      expect(existsSync(join(context, command?.[1] ?? 'missing'))).toBe(true);
    }
  });

  it('exposes the public port and the management port (the defaults of HTTP_PORT and MANAGEMENT_PORT)', () => {
    expect(stage(undefined).exposes).toEqual(['3000', '9464']);
  });

  it('compiles a product that needs no development dependency', () => {
    const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);
    const needed = new Set<string>();
    for (const file of jsFiles(join(context, 'dist'))) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:from\s+|import\(\s*|require\(\s*)['"]([^'"]+)['"]/g)) {
        const specifier = match[1] ?? '';
        if (specifier.startsWith('.') || builtins.has(specifier) || specifier.startsWith('node:'))
          continue;
        needed.add(packageOf(specifier));
      }
    }
    expect(needed.size).toBeGreaterThan(5);
    const missing = [...needed].filter((name) => pkg.dependencies[name] === undefined).sort();
    expect(missing).toEqual([]);
    // The demo's mock Kafka (koffi) and the test tools stay out of the image.
    expect(pkg.dependencies.koffi).toBeUndefined();
    expect(
      Object.keys(pkg.dependencies).filter((name) => pkg.devDependencies[name] !== undefined),
    ).toEqual([]);
  });

  describe('its healthcheck', () => {
    const healthcheck = (env: Record<string, string>): Promise<number> =>
      run(process.execPath, [join(context, 'dist', 'src', 'healthcheck.js')], {
        env: { PATH: process.env.PATH ?? '', ...env },
        timeout: 10_000,
      }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? -1,
      );

    it('is live when /health/live on MANAGEMENT_PORT answers 200, and not otherwise', async () => {
      let status = 200;
      const paths: string[] = [];
      const server = createHttpServer((req, res) => {
        paths.push(req.url ?? '');
        res.writeHead(status).end();
      });
      const port = await listen(server);
      try {
        await expect(healthcheck({ MANAGEMENT_PORT: String(port) })).resolves.toBe(0);
        status = 503;
        await expect(healthcheck({ MANAGEMENT_PORT: String(port) })).resolves.toBe(1);
        expect(paths).toEqual(['/health/live', '/health/live']);
      } finally {
        await close(server);
      }
      await expect(healthcheck({ MANAGEMENT_PORT: String(port) })).resolves.toBe(1);
    });

    it('asks the management port over plain HTTP, never the public port, TLS or not', async () => {
      const tls = await selfSignedTls();
      const live: RequestListener = (_req, res) => res.writeHead(200).end();
      const publicServer = createHttpsServer({ key: tls.key, cert: tls.cert }, live);
      const management = createHttpServer(live);
      const [publicPort, managementPort] = [await listen(publicServer), await listen(management)];
      const certFile = join(context, 'worker.crt');
      writeFileSync(certFile, tls.cert);
      const worker = { HTTP_PORT: String(publicPort), TLS_CERT_FILE: certFile };
      try {
        await expect(
          healthcheck({ ...worker, MANAGEMENT_PORT: String(managementPort) }),
        ).resolves.toBe(0);
        // The public port answering is not enough; nor is a listener that speaks TLS.
        await expect(healthcheck({ ...worker, MANAGEMENT_PORT: String(publicPort) })).resolves.toBe(
          1,
        );
      } finally {
        await Promise.all([close(publicServer), close(management)]);
        rmSync(certFile, { force: true });
      }
      await expect(healthcheck(worker)).resolves.toBe(1);
    });

    it('asks over HTTPS, verifying the certificate, when the management port has TLS', async () => {
      const tls = await selfSignedTls();
      const other = await generate([{ name: 'commonName', value: 'localhost' }], {
        keyType: 'ec',
        curve: 'P-256',
        algorithm: 'sha256',
      });
      const management = createHttpsServer({ key: tls.key, cert: tls.cert }, (_req, res) =>
        res.writeHead(200).end(),
      );
      const port = await listen(management);
      const certFile = join(context, 'management.crt');
      const otherFile = join(context, 'other.crt');
      writeFileSync(certFile, tls.cert);
      writeFileSync(otherFile, other.cert);
      try {
        await expect(
          healthcheck({ MANAGEMENT_PORT: String(port), MANAGEMENT_TLS_CERT_FILE: certFile }),
        ).resolves.toBe(0);
        // A listener whose certificate is not the configured one is not ours.
        await expect(
          healthcheck({ MANAGEMENT_PORT: String(port), MANAGEMENT_TLS_CERT_FILE: otherFile }),
        ).resolves.toBe(1);
        await expect(
          healthcheck({
            MANAGEMENT_PORT: String(port),
            MANAGEMENT_TLS_CERT_FILE: join(context, 'missing.crt'),
          }),
        ).resolves.toBe(1);
      } finally {
        await close(management);
        rmSync(certFile, { force: true });
        rmSync(otherFile, { force: true });
      }
    });

    it('follows MANAGEMENT_HOST when the listener is bound to one address', async () => {
      const server = createHttpServer((_req, res) => res.writeHead(200).end());
      const port = await listen(server, '127.0.0.2');
      try {
        await expect(
          healthcheck({ MANAGEMENT_PORT: String(port), MANAGEMENT_HOST: '127.0.0.2' }),
        ).resolves.toBe(0);
        await expect(
          healthcheck({ MANAGEMENT_PORT: String(port), MANAGEMENT_HOST: '0.0.0.0' }),
        ).resolves.toBe(1);
      } finally {
        await close(server);
      }
    });
  });
});
