/**
 * The image's HEALTHCHECK: GET /health/live on the worker's management listener in this
 * container, exit 0 when it answers 200 within 3 s, else 1. A script of its own rather than
 * curl (the slim image has none). It reads MANAGEMENT_PORT, MANAGEMENT_HOST and
 * MANAGEMENT_TLS_CERT_FILE itself, and nothing else, so that it never fails over a variable
 * the check does not need; a listener bound to every address is reached on 127.0.0.1.
 *
 * The management listener speaks plain HTTP unless MANAGEMENT_TLS_CERT_FILE is set; then
 * the check speaks HTTPS and verifies the listener's certificate as any client would (the
 * system's CAs, NODE_EXTRA_CA_CERTS, and the certificates of that file, so a self-signed
 * one is trusted), for the name the certificate gives itself (its first DNS name, else its
 * common name), since the check reaches it on a loopback address. The public port is never
 * asked, TLS or not.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { X509Certificate } from 'node:crypto';
import { checkServerIdentity, rootCertificates } from 'node:tls';

const TIMEOUT_MS = 3_000;

function liveUrl(env: Readonly<Record<string, string | undefined>>, tls: boolean): URL {
  const port =
    env.MANAGEMENT_PORT === undefined || env.MANAGEMENT_PORT === '' ? '9464' : env.MANAGEMENT_PORT;
  const bound = env.MANAGEMENT_HOST ?? '';
  const host = ['', '0.0.0.0', '::'].includes(bound)
    ? '127.0.0.1'
    : bound.includes(':')
      ? `[${bound}]`
      : bound;
  return new URL(`${tls ? 'https' : 'http'}://${host}:${port}/health/live`);
}

/** The name a certificate is for: its first DNS subject alternative name, else its CN. */
function certificateName(pem: string): string | undefined {
  const certificate = new X509Certificate(pem);
  const dns = /(?:^|,\s*)DNS:([^,\s]+)/.exec(certificate.subjectAltName ?? '')?.[1];
  return dns ?? /(?:^|\n)CN=([^\n]+)/.exec(certificate.subject)?.[1];
}

function send(url: URL, certPem: string | undefined, done: (res: IncomingMessage) => void) {
  if (certPem === undefined) return httpRequest(url, { timeout: TIMEOUT_MS }, done);
  const name = certificateName(certPem);
  return httpsRequest(
    url,
    {
      timeout: TIMEOUT_MS,
      ca: [...rootCertificates, certPem],
      ...(name === undefined
        ? {}
        : {
            servername: name,
            checkServerIdentity: (_host: string, cert) => checkServerIdentity(name, cert),
          }),
    },
    done,
  );
}

function checkLive(url: URL, certPem: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    let req: ClientRequest;
    try {
      req = send(url, certPem, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
    } catch {
      resolve(false);
      return;
    }
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(false));
    req.end();
  });
}

const certFile = process.env.MANAGEMENT_TLS_CERT_FILE;
let certPem: string | undefined;
let readable = true;
if (certFile !== undefined && certFile !== '') {
  try {
    certPem = readFileSync(certFile, 'utf8');
  } catch {
    readable = false;
  }
}
const url = liveUrl(process.env, certFile !== undefined && certFile !== '');
void (readable ? checkLive(url, certPem) : Promise.resolve(false)).then((live) => {
  process.stdout.write(`${url.href}: ${live ? 'live' : 'not live'}\n`);
  process.exit(live ? 0 : 1);
});
