/**
 * The image's HEALTHCHECK: GET /health/live on the worker's management listener in this
 * container, exit 0 when it answers 200 within 3 s, else 1. A script of its own rather than
 * curl (the slim image has none). The management listener is plain HTTP whatever the public
 * one speaks, so the check never needs a certificate. It reads MANAGEMENT_PORT and
 * MANAGEMENT_HOST itself, and nothing else, so that it never fails over a variable the check
 * does not need; a listener bound to every address is reached on 127.0.0.1.
 */
import { request } from 'node:http';

const TIMEOUT_MS = 3_000;

function liveUrl(env: Readonly<Record<string, string | undefined>>): URL {
  const port =
    env.MANAGEMENT_PORT === undefined || env.MANAGEMENT_PORT === '' ? '9464' : env.MANAGEMENT_PORT;
  const bound = env.MANAGEMENT_HOST ?? '';
  const host = ['', '0.0.0.0', '::'].includes(bound)
    ? '127.0.0.1'
    : bound.includes(':')
      ? `[${bound}]`
      : bound;
  return new URL(`http://${host}:${port}/health/live`);
}

function checkLive(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { timeout: TIMEOUT_MS }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(false));
    req.end();
  });
}

const url = liveUrl(process.env);
void checkLive(url).then((live) => {
  process.stdout.write(`${url.href}: ${live ? 'live' : 'not live'}\n`);
  process.exit(live ? 0 : 1);
});
