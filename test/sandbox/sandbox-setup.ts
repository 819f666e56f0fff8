/**
 * The set-up every sandbox conformance file shares: one sandbox per file (started before
 * all its tests, closed after them), reset before each test, and, when the file asks for
 * it, a fresh token of the default client after each reset. Hooks run in the order they
 * are registered, so a file's own hooks registered after this call see the sandbox.
 */
import { afterAll, beforeAll, beforeEach } from '@jest/globals';
import type { SandboxOptions } from '../../src/sandbox/sandbox.server.js';
import { fetchToken, startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import { control } from './helpers.js';

export interface SandboxSetup {
  /** Options of the file's sandbox (default: the standard one). */
  readonly options?: SandboxOptions;
  /** Receives the file's sandbox once it started. */
  readonly started: (sandbox: SandboxHandle) => void;
  /** Receives a fresh token of the default client after each reset (none when omitted). */
  readonly token?: (token: string) => void;
}

export function useTestSandbox(setup: SandboxSetup): void {
  let sandbox: SandboxHandle | undefined;
  beforeAll(async () => {
    sandbox = await startTestSandbox(setup.options);
    setup.started(sandbox);
  });
  afterAll(() => sandbox?.close());
  beforeEach(async () => {
    if (sandbox === undefined) throw new Error('the sandbox did not start');
    await control(sandbox, 'POST', '/reset');
    if (setup.token) setup.token(await fetchToken(sandbox));
  });
}
