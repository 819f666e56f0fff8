/**
 * Secrets mounted the way Kubernetes mounts them, for the rotation tests: the kubelet's atomic
 * writer keeps each version in a timestamped directory, points `..data` at the current one and
 * exposes `<name>` as a symlink through `..data`; an update writes a new directory and swaps
 * `..data` with one rename, so a reader sees the old file or the new one, never half of either.
 * Also: a logger whose JSON lines a test reads.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
export { capturingLogger } from './capturing-logger.js';

export interface MountedSecret {
  /** The path a deployment names in `<NAME>_FILE`. */
  readonly path: string;
  /** Replaces the secret in place (atomically, as the kubelet does). */
  update(value: string): void;
  remove(): void;
}

/** A secret volume holding one key, `name`, with `value` (written with a trailing newline). */
export function mountedSecret(name: string, value: string): MountedSecret {
  const volume = mkdtempSync(join(tmpdir(), 'secret-volume-'));
  let version = 0;
  const writeVersion = (content: string): string => {
    version += 1;
    const directory = `..${new Date().toISOString().replace(/[:.]/g, '_')}.${version}`;
    mkdirSync(join(volume, directory), { mode: 0o755 });
    writeFileSync(join(volume, directory, name), `${content}\n`, { mode: 0o600 });
    return directory;
  };
  symlinkSync(writeVersion(value), join(volume, '..data'));
  symlinkSync(join('..data', name), join(volume, name));
  return {
    path: join(volume, name),
    update(next) {
      const directory = writeVersion(next);
      symlinkSync(directory, join(volume, '..data_tmp'));
      renameSync(join(volume, '..data_tmp'), join(volume, '..data'));
    },
    remove() {
      rmSync(volume, { recursive: true, force: true });
    },
  };
}
