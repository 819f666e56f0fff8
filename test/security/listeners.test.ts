/**
 * The worker's two listeners (issue 18 §4), on a real worker started as main.ts starts it
 * (startWorker), with HTTPS on the public port as in production, short time-outs and a
 * small per-address connection limit:
 *
 * - the public port serves the webhook route; /metrics, /health/*, /console, unknown paths
 *   and methods and addresses beside the webhook route all get one identical 404 (the one the
 *   receiver gives an unknown webhook kind), naming no framework;
 * - the management port (plain HTTP) serves /metrics, /health/live and /health/ready, and no
 *   webhook route; /metrics says it is ready and when its certificate expires;
 * - a client that trickles its headers or its body is cut off, and so is one that connects
 *   and never starts TLS;
 * - a body declared too large gets 413 before a byte of it is sent; a chunked one gets 413
 *   once it passes the limit, and the connection closes long before the client is done;
 * - connections from one address beyond the limit are reset on arrival and counted, while
 *   the connections it holds and other addresses are served.
 *
 * Raw sockets come from addresses of their own on the loopback (127.0.0.x) so that the
 * per-address limit of one case never meets another's connections.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import type pg from 'pg';
import { Agent, Client, request } from 'undici';
import { newWebhookCredentials } from '../../src/orders/new-payment/webhook-credentials.js';
import type { Worker } from '../../src/worker.js';
import { openTestPool } from '../support/database.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { selfSignedTls, type TlsFixture } from '../support/tls.js';

jest.setTimeout(90_000);

const MAX_CONNECTIONS_PER_ADDRESS = 4;
/** Far more than a client needs to be cut off; the server must close the connection first. */
const TRICKLE_BYTES = 300;
const TRICKLE_EVERY_MS = 100;
/** What the chunked client would send if nobody stopped it (the limit is 256 KiB). */
const CHUNKED_CAP_BYTES = 64 * 1024 * 1024;

let tls: TlsFixture;
let certDir: string;
let pipeline: Pipeline;
let worker: Worker;
let publicPort: number;
let agent: Agent;
let db: pg.Pool;

interface Payment {
  readonly id: string;
  readonly token: string;
  readonly apiKey: string;
}

beforeAll(async () => {
  tls = await selfSignedTls();
  certDir = mkdtempSync(join(tmpdir(), 'pfb-listeners-'));
  writeFileSync(join(certDir, 'cert.pem'), tls.cert);
  writeFileSync(join(certDir, 'key.pem'), tls.key);
  pipeline = await startPipeline('listeners', {
    TLS_CERT_FILE: join(certDir, 'cert.pem'),
    TLS_KEY_FILE: join(certDir, 'key.pem'),
    HTTP_HEADERS_TIMEOUT: '1s',
    HTTP_REQUEST_TIMEOUT: '2s',
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(MAX_CONNECTIONS_PER_ADDRESS),
  });
  worker = await pipeline.startWorker();
  publicPort = Number(new URL(worker.url).port);
  agent = new Agent({ connect: { ca: tls.ca }, connections: 2 });
  db = openTestPool(pipeline.database.url, 2);
}, 120_000);

afterAll(async () => {
  await agent?.close();
  await db?.end();
  await pipeline?.stop();
  if (certDir !== undefined) rmSync(certDir, { recursive: true, force: true });
});

async function createPayment(): Promise<Payment> {
  const credentials = newWebhookCredentials();
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO payments (order_id, state, currency, total_gross_minor, total_net_minor,
                           webhook_token, api_key_hash)
     VALUES ($1, 'created', 'NOK', 100, 80, $2, $3) RETURNING id::text AS id`,
    [`SO-${crypto.randomUUID()}`, credentials.token, credentials.apiKeyHash],
  );
  return { id: rows[0]!.id, token: credentials.token, apiKey: credentials.apiKey };
}

async function inboxCount(paymentId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'SELECT count(*) AS n FROM webhook_inbox WHERE payment_id = $1',
    [paymentId],
  );
  return Number(rows[0]!.n);
}

const webhookBody = (): string =>
  JSON.stringify({
    deliveryId: crypto.randomUUID(),
    event: 'payment.updated',
    paymentId: 'pf-1',
    paymentStatus: 'paid',
  });

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

async function callPublic(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const response = await request(`${worker.url}${path}`, {
    method: method as 'GET',
    dispatcher: agent,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body }),
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    text: await response.body.text(),
  };
}

/** A counter of the management port's /metrics (summed over its label sets if no labels given). */
async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${worker.managementUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `) || (!series.includes('{') && line.startsWith(`${series}{`))) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

interface Closed {
  /** What the server sent before it closed (latin1). */
  readonly received: string;
  /** The socket error the client saw, if any (ECONNRESET, EPIPE …). */
  readonly error: string | undefined;
}

/** Resolves when the connection closes, with what the server sent. */
function untilClosed(socket: Socket): Promise<Closed> {
  return new Promise((resolve) => {
    let received = '';
    let error: string | undefined;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on(
      'error',
      (failure: NodeJS.ErrnoException) => (error ??= failure.code ?? failure.message),
    );
    socket.on('close', () => resolve({ received, error }));
  });
}

/** A TLS connection to the public port from `localAddress`, and the promise of its end. */
function openTls(localAddress: string): Promise<{ socket: Socket; closed: Promise<Closed> }> {
  return new Promise((resolve, reject) => {
    const tcp = tcpConnect({ host: '127.0.0.1', port: publicPort, localAddress });
    const socket = tlsConnect({ socket: tcp, host: '127.0.0.1', ca: tls.ca });
    const closed = untilClosed(socket);
    socket.once('secureConnect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

/** Writes one byte every TRICKLE_EVERY_MS until TRICKLE_BYTES or the server closes; how many. */
function trickle(socket: Socket, byte: string): () => number {
  let sent = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || sent >= TRICKLE_BYTES) {
      clearInterval(timer);
      if (!socket.destroyed) socket.end(); // the client gives up: the server did not
      return;
    }
    socket.write(byte);
    sent++;
  }, TRICKLE_EVERY_MS);
  return () => {
    clearInterval(timer);
    return sent;
  };
}

/** The status and JSON body of a raw HTTP answer. */
function parseAnswer(raw: string): { status: number; head: string; body: unknown } {
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.slice(0, end);
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1] ?? 0);
  const text = end < 0 ? '' : raw.slice(end + 4);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status, head: head.toLowerCase(), body };
}

describe('the public listener (HTTP_PORT)', () => {
  it('serves the webhook route over HTTPS and stores the webhook', async () => {
    const payment = await createPayment();
    const answer = await callPublic(
      'POST',
      `/webhooks/payflow/${payment.token}/payment-update`,
      { 'x-api-key': payment.apiKey },
      webhookBody(),
    );
    expect(worker.url).toMatch(/^https:\/\//);
    expect({ status: answer.status, body: JSON.parse(answer.text) as unknown }).toEqual({
      status: 200,
      body: { status: 'accepted' },
    });
    expect(await inboxCount(payment.id)).toBe(1);
  });

  it('answers everything else with one identical 404 that names nothing', async () => {
    const payment = await createPayment();
    const key = { 'x-api-key': payment.apiKey };
    const paths = [
      '/metrics',
      '/health/live',
      '/health/ready',
      '/console',
      '/console/login',
      '/',
      '/index.html',
      '/webhooks',
      '/webhooks/payflow',
      `/webhooks/payflow/${payment.token}`,
      `/webhooks/payflow/${payment.token}/payment-update/extra`,
      '/webhooks/payflow//payment-update',
      `/webhooks/payflow/${payment.token}/payment-update/../../../../metrics`,
    ];
    const calls: [string, string, Promise<Answer>][] = [];
    for (const path of paths) {
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        const body = ['POST', 'PUT', 'PATCH'].includes(method) ? webhookBody() : undefined;
        calls.push([method, path, callPublic(method, path, key, body)]);
      }
    }
    // The webhook route itself with any other method, and a kind the receiver does not know.
    const route = `/webhooks/payflow/${payment.token}/payment-update`;
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      calls.push([method, route, callPublic(method, route, key)]);
    }
    const unknownKind = `/webhooks/payflow/${payment.token}/refund-update`;
    calls.push(['POST', unknownKind, callPublic('POST', unknownKind, key, webhookBody())]);

    const reference = await calls[0]![2];
    expect(reference.status).toBe(404);
    expect(JSON.parse(reference.text)).toEqual({ code: 'not_found', message: 'not found' });
    const stable = (answer: Answer) => ({
      status: answer.status,
      text: answer.text,
      contentType: answer.headers['content-type'],
      cacheControl: answer.headers['cache-control'],
      // Everything but the date and how the connection goes on.
      headerNames: Object.keys(answer.headers)
        .filter((name) => !['date', 'connection', 'keep-alive'].includes(name))
        .sort(),
    });
    for (const [method, path, answer] of calls) {
      expect({ method, path, ...stable(await answer) }).toEqual({
        method,
        path,
        ...stable(reference),
      });
    }
    expect(reference.headers['x-powered-by']).toBeUndefined();
    expect(reference.headers.server).toBeUndefined();
    expect(reference.text).not.toMatch(/nest|fastify|express|cannot|route|metrics|health|webhook/i);
    expect(await inboxCount(payment.id)).toBe(0);
  });

  it('answers HEAD on the management paths with the same bare 404', async () => {
    for (const path of ['/metrics', '/health/live', '/health/ready']) {
      const answer = await callPublic('HEAD', path);
      expect({ path, status: answer.status, text: answer.text }).toEqual({
        path,
        status: 404,
        text: '',
      });
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    }
  });

  it('cuts off a client that trickles its headers (HTTP_HEADERS_TIMEOUT)', async () => {
    const before = await metric('payflow_bridge_public_client_errors_total{reason="timeout"}');
    const { socket, closed } = await openTls('127.0.0.11');
    socket.write('POST /webhooks/payflow/AAAAAAAAAAAAAAAAAAAAAA/payment-update HTTP/1.1\r\n');
    socket.write('Host: 127.0.0.1\r\nX-Slow: ');
    const stop = trickle(socket, 'x');
    const { received } = await closed;
    const sent = stop();
    // The server closed the connection long before the client would have stopped.
    expect(sent).toBeLessThan(TRICKLE_BYTES);
    expect(parseAnswer(received)).toMatchObject({ status: 408, body: '' });
    expect(await metric('payflow_bridge_public_client_errors_total{reason="timeout"}')).toBe(
      before + 1,
    );
  });

  it('cuts off a client that trickles its body (HTTP_REQUEST_TIMEOUT)', async () => {
    const payment = await createPayment();
    const { socket, closed } = await openTls('127.0.0.12');
    socket.write(
      `POST /webhooks/payflow/${payment.token}/payment-update HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Content-Type: application/json\r\nX-Api-Key: ${payment.apiKey}\r\n` +
        `Content-Length: ${TRICKLE_BYTES + 2}\r\n\r\n{`,
    );
    const stop = trickle(socket, ' ');
    const { received } = await closed;
    expect(stop()).toBeLessThan(TRICKLE_BYTES);
    expect(parseAnswer(received)).toMatchObject({ status: 408, body: '' });
    expect(await inboxCount(payment.id)).toBe(0);
  });

  it('cuts off a client that connects and never starts TLS', async () => {
    const series = 'payflow_bridge_public_client_errors_total{reason="tls_handshake"}';
    const before = await metric(series);
    const socket = tcpConnect({ host: '127.0.0.1', port: publicPort, localAddress: '127.0.0.13' });
    const { received } = await untilClosed(socket);
    expect(received).toBe('');
    expect(await metric(series)).toBe(before + 1);
  });

  it('answers 413 to a huge declared body before a byte of it is sent, and closes', async () => {
    const payment = await createPayment();
    const { socket, closed } = await openTls('127.0.0.14');
    socket.write(
      `POST /webhooks/payflow/${payment.token}/payment-update HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Content-Type: application/json\r\nX-Api-Key: ${payment.apiKey}\r\n` +
        `Content-Length: ${10 * 1024 ** 3}\r\n\r\n`,
    );
    // Not one byte of the body follows: the answer can only come from the declared length.
    const { received } = await closed;
    const answer = parseAnswer(received);
    expect(answer).toMatchObject({
      status: 413,
      body: { code: 'payload_too_large', message: 'the body is too large' },
    });
    expect(answer.head).toContain('connection: close');
    expect(await inboxCount(payment.id)).toBe(0);
  });

  it('answers 413 to a chunked body once it passes the limit, and stops reading it', async () => {
    const payment = await createPayment();
    const { socket, closed } = await openTls('127.0.0.15');
    socket.write(
      `POST /webhooks/payflow/${payment.token}/payment-update HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Content-Type: application/json\r\nX-Api-Key: ${payment.apiKey}\r\n` +
        `Transfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const frame = Buffer.concat([
      Buffer.from(`${chunk.length.toString(16)}\r\n`),
      chunk,
      Buffer.from('\r\n'),
    ]);
    let written = 0;
    const pump = (): void => {
      while (!socket.destroyed && written < CHUNKED_CAP_BYTES) {
        written += frame.length;
        if (!socket.write(frame)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!socket.destroyed) socket.end('0\r\n\r\n');
    };
    pump();
    const { received } = await closed;
    const answer = parseAnswer(received);
    expect(answer).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
    expect(answer.head).toContain('connection: close');
    // The server closed the connection: the client could not send what it meant to.
    expect(written).toBeLessThan(CHUNKED_CAP_BYTES);
    expect(await inboxCount(payment.id)).toBe(0);
  });

  it('resets connections from one address beyond HTTP_MAX_CONNECTIONS_PER_ADDRESS, and counts them', async () => {
    const client = (localAddress: string) =>
      new Client(worker.url, { connect: { ca: tls.ca }, localAddress, pipelining: 1 });
    const get = async (target: Client, path: string) => {
      const response = await target.request({ method: 'GET', path });
      await response.body.text();
      return response.statusCode;
    };
    // The address's whole allowance, each connection kept alive after a request.
    const held = Array.from({ length: MAX_CONNECTIONS_PER_ADDRESS }, () => client('127.0.0.20'));
    const others: Client[] = [];
    try {
      for (const each of held) expect(await get(each, '/held')).toBe(404);
      const before = await metric('payflow_bridge_public_connections_refused_total');

      const burst = Array.from({ length: 8 }, () =>
        untilClosed(
          tcpConnect({ host: '127.0.0.1', port: publicPort, localAddress: '127.0.0.20' }),
        ),
      );
      for (const closed of await Promise.all(burst)) {
        expect(closed).toEqual({ received: '', error: 'ECONNRESET' });
      }
      expect(await metric('payflow_bridge_public_connections_refused_total')).toBe(before + 8);

      // The held connections are still served, and so is another address.
      for (const each of held) expect(await get(each, '/still-held')).toBe(404);
      others.push(client('127.0.0.21'));
      expect(await get(others[0]!, '/other')).toBe(404);

      // Once one of its connections closes, the address may open another.
      await held.pop()!.close();
      let served = false;
      for (let attempt = 0; attempt < 100 && !served; attempt++) {
        const next = client('127.0.0.20');
        others.push(next);
        served = await get(next, '/again').then(
          (status) => status === 404,
          () => false,
        );
        if (!served) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(served).toBe(true);
    } finally {
      await Promise.allSettled([...held, ...others].map((each) => each.destroy()));
    }
  });
});

describe('the management listener (MANAGEMENT_PORT)', () => {
  it('serves /metrics, /health/live and /health/ready over plain HTTP', async () => {
    expect(worker.managementUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(worker.managementUrl).port).not.toBe(String(publicPort));

    const metrics = await fetch(`${worker.managementUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(text).toContain('payflow_bridge_webhooks_received_total');
    expect(text).toContain('payflow_bridge_public_connections_refused_total');

    const live = await fetch(`${worker.managementUrl}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toMatchObject({ status: 'ok' });

    // Ready once the consumer has heard from Kafka; it may take a moment after start-up.
    let ready = await fetch(`${worker.managementUrl}/health/ready`);
    for (let attempt = 0; attempt < 60 && ready.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      ready = await fetch(`${worker.managementUrl}/health/ready`);
    }
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ok',
      info: { database: { status: 'up' }, orderEvents: { status: 'up' } },
    });
  });

  it('exposes its readiness and the expiry of the certificate it loaded on /metrics', async () => {
    // Ready (as the test above waits for), so the gauge evaluated at the scrape says 1.
    let ready = await metric('payflow_bridge_ready');
    for (let attempt = 0; attempt < 60 && ready !== 1; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      ready = await metric('payflow_bridge_ready');
    }
    expect(ready).toBe(1);
    // TLS_CERT_FILE is the only certificate this worker loads: one series, its notAfter.
    const notAfter = Math.floor(Date.parse(new X509Certificate(tls.cert).validTo) / 1000);
    expect(
      await metric('payflow_bridge_certificate_expiry_timestamp_seconds{certificate="public_tls"}'),
    ).toBe(notAfter);
    const text = await (await fetch(`${worker.managementUrl}/metrics`)).text();
    const series = text
      .split('\n')
      .filter((line) => line.startsWith('payflow_bridge_certificate_expiry_timestamp_seconds'));
    expect(series).toEqual([
      `payflow_bridge_certificate_expiry_timestamp_seconds{certificate="public_tls"} ${notAfter}`,
    ]);
  });

  it('serves no webhook route', async () => {
    const payment = await createPayment();
    const answer = await fetch(
      `${worker.managementUrl}/webhooks/payflow/${payment.token}/payment-update`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': payment.apiKey },
        body: webhookBody(),
      },
    );
    expect(answer.status).toBe(404);
    await answer.arrayBuffer();
    expect(await inboxCount(payment.id)).toBe(0);
  });

  it('does not speak TLS', async () => {
    const { port } = new URL(worker.managementUrl);
    const overTls = await fetch(`https://127.0.0.1:${port}/health/live`).then(
      (response) => `answered ${response.status}`,
      (error: unknown) => `failed: ${String(error)}`,
    );
    expect(overTls).toMatch(/^failed: /);
  });
});
