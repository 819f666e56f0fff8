/**
 * Runs a compiled entry point (`dist/…`, what `npm start` and the image run) as a child
 * process with exactly the environment a test gives it, and returns its exit code and output.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface ProcessResult {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/**
 * Runs `entry` with exactly `env` (plus PATH and HOME) and returns its exit code and output;
 * SIGKILL after `timeoutMs` (code null then).
 */
export function runCompiled(
  entry: string,
  env: Readonly<Record<string, string>>,
  timeoutMs = 60_000,
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(process.cwd(), entry)], {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}
