/**
 * The image's HEALTHCHECK: GET /health/live on the worker in this container, exit 0 when it
 * answers 200 within 3 s, else 1. A script of its own rather than curl (the slim image has
 * none) and rather than a shell one-liner: the worker serves HTTPS with the certificate of
 * TLS_CERT_FILE when that is set, and the check must follow it. It reads HTTP_PORT and
 * TLS_CERT_FILE itself, and nothing else, so that it never fails over a variable the check
 * does not need. The certificate is not verified: the check talks to 127.0.0.1, whose name
 * the certificate need not carry.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const TIMEOUT_MS = 3_000;

function liveUrl(env: Readonly<Record<string, string | undefined>>): URL {
  const port = env.HTTP_PORT === undefined || env.HTTP_PORT === '' ? '3000' : env.HTTP_PORT;
  const scheme = env.TLS_CERT_FILE === undefined || env.TLS_CERT_FILE === '' ? 'http' : 'https';
  return new URL(`${scheme}://127.0.0.1:${port}/health/live`);
}

function checkLive(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { timeout: TIMEOUT_MS, rejectUnauthorized: false }, (res) => {
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
