/**
 * Builds of the worker for the deploy tests: the previous release, from the commit that
 * migrations/released.json records (`commit`, whose newest migration is `lastReleased`),
 * and this checkout as it is. Both are compiled with swc, file by file, as jest compiles the
 * tests (legacy decorators with their metadata): a few seconds where `tsc` takes a minute
 * on two cores, and without touching dist/, which other tests build.
 *
 * The previous release is taken out of git (`git archive`) into a cache directory under
 * os.tmpdir() and kept there (its commit does not change); this checkout's node_modules is
 * linked in. A clone without that commit (a shallow one) fails with a message saying so.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { transformFile, type Options } from '@swc/core';

const ROOT = process.cwd();

/** What migrations/released.json records about the release before this one. */
export interface ReleasedRecord {
  /** Its newest migration: every migration after it must be expand-only. */
  readonly lastReleased: string;
  /** The full hash of its commit. */
  readonly commit: string;
}

export function readReleased(root = ROOT): ReleasedRecord {
  const parsed = JSON.parse(readFileSync(join(root, 'migrations', 'released.json'), 'utf8')) as {
    lastReleased?: unknown;
    commit?: unknown;
  };
  if (typeof parsed.lastReleased !== 'string' || typeof parsed.commit !== 'string') {
    throw new Error('migrations/released.json needs "lastReleased" and "commit"');
  }
  if (!/^[0-9a-f]{40}$/.test(parsed.commit)) {
    throw new Error(`migrations/released.json: "commit" must be a full hash, not ${parsed.commit}`);
  }
  return { lastReleased: parsed.lastReleased, commit: parsed.commit };
}

/** The options jest.config.js gives @swc/jest, for Node's own ESM loader. */
const SWC: Options = {
  jsc: {
    target: 'es2023',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
  swcrc: false,
  configFile: false,
};

/** Files under `dir` (recursively), as paths relative to `root`. */
function* filesUnder(root: string, dir: string): Generator<string> {
  const full = join(root, dir);
  if (!existsSync(full)) return;
  for (const name of readdirSync(full)) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) yield* filesUnder(root, path);
    else yield path;
  }
}

/** What copy-assets.mjs copies: the console's templates and static files. */
const isAsset = (path: string): boolean =>
  path.endsWith('.eta') || /^src\/console\/assets\/[^/]+\.(css|js)$/.test(path);

/**
 * Compiles src/ and migrations/ of `sourceRoot` into `outRoot/dist` (the layout of
 * `npm run build`) with the assets, a copy of package.json (ESM) and a link to this
 * checkout's node_modules. Returns the worker's entry point.
 */
async function compileTree(sourceRoot: string, outRoot: string): Promise<string> {
  const dist = join(outRoot, 'dist');
  const work: Promise<void>[] = [];
  for (const dir of ['src', 'migrations']) {
    for (const path of filesUnder(sourceRoot, dir)) {
      const target = join(dist, path);
      if (isAsset(path)) {
        mkdirSync(dirname(target), { recursive: true });
        cpSync(join(sourceRoot, path), target);
      } else if (path.endsWith('.ts') && !path.endsWith('.spec.ts') && !path.endsWith('.d.ts')) {
        work.push(
          transformFile(join(sourceRoot, path), { ...SWC, filename: path }).then((output) => {
            mkdirSync(dirname(target), { recursive: true });
            writeFileSync(target.replace(/\.ts$/, '.js'), output.code);
          }),
        );
      }
    }
  }
  await Promise.all(work);
  cpSync(join(sourceRoot, 'package.json'), join(outRoot, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(outRoot, 'node_modules'), 'dir');
  const main = join(dist, 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`compiling ${sourceRoot} gave no ${main}`);
  return main;
}

function git(args: readonly string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
}

/**
 * The previous release's worker entry point, built once from its commit and cached in
 * os.tmpdir()/payflow-bridge-release-<commit>/. Throws when the commit is not in the clone,
 * or when released.json's `lastReleased` is not that commit's newest migration.
 */
export async function previousReleaseMain(): Promise<{ main: string; released: ReleasedRecord }> {
  const released = readReleased();
  const { commit } = released;
  try {
    git(['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    throw new Error(
      `the previous release's commit ${commit} (migrations/released.json "commit") is not in ` +
        `this clone: the two-version test needs the history (a full clone, or git fetch --unshallow)`,
    );
  }
  const newest = git(['ls-tree', '--name-only', `${commit}:migrations`])
    .split('\n')
    .filter((name) => /^\d+-[\w-]+\.ts$/.test(name))
    .map((name) => name.replace(/\.ts$/, ''))
    .sort()
    .at(-1);
  if (newest !== released.lastReleased) {
    throw new Error(
      `migrations/released.json: "lastReleased" is ${released.lastReleased}, but the newest ` +
        `migration of commit ${commit} is ${newest ?? 'none'}`,
    );
  }
  const cache = join(tmpdir(), `payflow-bridge-release-${commit}`);
  const main = join(cache, 'dist', 'src', 'main.js');
  if (existsSync(join(cache, 'READY'))) return { main, released };

  const staging = `${cache}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(join(staging, 'tree'), { recursive: true });
  const archive = join(staging, 'release.tar');
  git(['archive', '--format=tar', '-o', archive, commit, 'src', 'migrations', 'package.json']);
  execFileSync('tar', ['-xf', archive, '-C', join(staging, 'tree')], { stdio: 'pipe' });
  await compileTree(join(staging, 'tree'), staging);
  writeFileSync(join(staging, 'READY'), `${commit}\n`);
  if (!existsSync(join(cache, 'READY'))) {
    rmSync(cache, { recursive: true, force: true });
    try {
      renameSync(staging, cache);
    } catch (error) {
      // Another test file built it at the same time: use theirs.
      if (!existsSync(join(cache, 'READY'))) throw error;
    }
  }
  rmSync(staging, { recursive: true, force: true });
  return { main, released };
}

/** This checkout's worker (its src/ and migrations/ as they are now), built into `dir`. */
export async function currentBuildMain(dir: string): Promise<string> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return compileTree(ROOT, dir);
}

/** A migration's file name from its class name (as TypeORM's `migrations` table holds it). */
export function migrationName(timestampedClass: string): string {
  // "PaymentReferences1764122400000" → "1764122400000-PaymentReferences"
  const match = /^(.*?)(\d{13})$/.exec(timestampedClass);
  return match === null ? timestampedClass : `${match[2]}-${match[1]}`;
}

/** The migration files of this checkout after `lastReleased` (what the new worker runs). */
export function migrationsAfter(lastReleased: string): string[] {
  return [...filesUnder(ROOT, 'migrations')]
    .map((path) => relative('migrations', path))
    .filter((name) => /^\d+-[\w-]+\.ts$/.test(name))
    .map((name) => name.replace(/\.ts$/, ''))
    .filter((name) => name > lastReleased)
    .sort();
}
