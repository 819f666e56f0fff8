/**
 * Starts a Payflow sandbox for a test (ephemeral port, silent) and fetches tokens with
 * plain HTTP, as any client would.
 */
import { silentLogger } from '../../src/logging/logger.js';
import {
  startSandbox,
  type SandboxHandle,
  type SandboxOptions,
} from '../../src/sandbox/sandbox.server.js';

export type { SandboxHandle };

export const SANDBOX_CLIENT_ID = 'sandbox-client';
export const SANDBOX_CLIENT_SECRET = 'sandbox-secret';

/**
 * The shapes the sandbox answers in: `standard`, or `alternate` (SANDBOX_SHAPES=alternate)
 * when the jest project "alternate-shapes" runs the end-to-end suites a second time.
 */
function shapesOfRun(): SandboxOptions['shapes'] {
  return process.env.TEST_SANDBOX_SHAPES === 'alternate' ? 'alternate' : 'standard';
}

export function startTestSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  return startSandbox({
    port: 0,
    host: '127.0.0.1',
    logger: silentLogger(),
    shapes: shapesOfRun(),
    ...options,
  });
}

/** POST /partner/auth/token with HTTP Basic; returns the access token. */
export async function fetchToken(
  sandbox: SandboxHandle,
  clientId = SANDBOX_CLIENT_ID,
  clientSecret = SANDBOX_CLIENT_SECRET,
  scope?: string,
): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope !== undefined) body.set('scope', scope);
  const response = await fetch(`${sandbox.partnerUrl}/auth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body,
  });
  if (response.status !== 200) {
    throw new Error(`token request failed: ${response.status} ${await response.text()}`);
  }
  const json = (await response.json()) as { access_token: string };
  return json.access_token;
}

/** The sandbox's control API (no auth): JSON in and out; a non-2xx answer throws. */
export async function sandboxControl<T = unknown>(
  sandbox: SandboxHandle,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${sandbox.url}/sandbox${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300)
    throw new Error(`control ${method} ${path}: ${response.status} ${text}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}
