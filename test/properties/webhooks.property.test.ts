/**
 * Property: whatever reaches the worker's webhook endpoint, only Payflow's real webhooks are
 * stored, nothing is answered 5xx or with a stack trace, and every real webhook still
 * arrives exactly once. Generated with fast-check from a fixed seed (support/webhook-cases.ts
 * lists the families), 10,000 requests in CI and 1,000 locally (PROPERTY_RUNS,
 * PROPERTY_SEED), sent over real HTTPS with bounded concurrency to the worker as a child
 * process (the real dist/src/main.js), while the Payflow sandbox delivers real webhooks for
 * payers paying in between.
 *
 * Checked at the end:
 * - every generated request got a 4xx (400, 401, 404, 413, 414, 429 …): no 2xx, no 5xx, no
 *   dropped connection (a request is sent once more when the keep-alive connection it went
 *   on was closed after an earlier refusal), and no body showing a stack trace or a source
 *   path;
 * - webhook_inbox holds exactly one row per webhook the sandbox delivered (matched by its
 *   dedupe key), and nothing else;
 * - each payment that was paid got exactly one payment.status_changed (SUCCESS);
 * - the worker is the same process, alive, answers /health/live, and stays under a memory
 *   bound.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type pg from 'pg';
import { Pool } from 'undici';
import { partitionOfKey } from '../../src/messaging/kafka/kafka.producer.js';
import type { WebhookKind } from '../../src/payflow/wire/payflow.schemas.js';
import { dedupeKey } from '../../src/webhooks/receiver/receive-webhook.command.js';
import { openTestPool } from '../support/database.js';
import { sandboxControl } from '../support/sandbox.js';
import { selfSignedTls, type TlsFixture } from '../support/tls.js';
import { caseIds, validPaymentRequestRecipe, type ErpCase } from './support/erp-cases.js';
import { propertySettings } from './support/settings.js';
import {
  BODY_LIMIT_BYTES,
  generateWebhookRequests,
  type RealPayment,
  type WebhookRequest,
} from './support/webhook-cases.js';
import {
  listSome,
  PARTITIONS,
  RssSampler,
  sendBatched,
  startPropertyBed,
  TopicRecorder,
  type PropertyBed,
} from './support/worker-bed.js';

const { runs, seed } = propertySettings();

/** Requests in flight at once. */
const CONCURRENCY = 16;
/** Payments paid by their payer while the generated requests go in. */
const PAID_PAYMENTS = Math.min(40, Math.max(10, Math.ceil(runs / 250)));
const RSS_LIMIT_MB = 400;
/** What a body must not show: a stack frame, a source file position, a dependency's path. */
const STACK_TRACE = /\bat \S+ \(|\n\s+at |node_modules|\.(?:[cm]?js|ts):\d+/;

interface StatusEvent {
  readonly type: string;
  readonly orderId: string;
  readonly paymentId: string | null;
  readonly data: { readonly providerStatus?: string };
}

interface SandboxPayment {
  readonly id: string;
  readonly body: {
    readonly payment: { readonly internalRef?: string };
    readonly callback?: { readonly url?: string; readonly api_key?: unknown };
  };
}

interface Delivery {
  readonly id: string;
  readonly deliveryId: string;
  readonly paymentId: string;
  readonly kind: WebhookKind;
  readonly delivered: boolean;
  readonly givenUp: boolean;
  readonly attempts: readonly { readonly status: number }[];
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly error: string | undefined;
  /** Sent a second time after the connection closed under the first. */
  readonly resent?: boolean;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

describe(`generated webhook requests (${runs} requests, seed ${seed})`, () => {
  let tls: TlsFixture;
  let bed: PropertyBed;
  let rss: RssSampler | undefined;
  let status: TopicRecorder;
  let db: pg.Pool;
  let http: Pool;

  beforeAll(async () => {
    tls = await selfSignedTls();
    const dir = mkdtempSync(join(tmpdir(), 'pfb-prop-tls-'));
    writeFileSync(join(dir, 'cert.pem'), tls.cert);
    writeFileSync(join(dir, 'key.pem'), tls.key);
    const port = await freePort();
    bed = await startPropertyBed('prop_webhooks', {
      env: {
        HTTP_PORT: String(port),
        WEBHOOK_PUBLIC_BASE_URL: `https://localhost:${port}`,
        TLS_CERT_FILE: join(dir, 'cert.pem'),
        TLS_KEY_FILE: join(dir, 'key.pem'),
        WEBHOOK_PROCESSING_POLL_INTERVAL: '200ms',
      },
      sandbox: { webhookCa: tls.ca },
      ca: tls.ca,
    });
    status = await TopicRecorder.start(bed.kafka, bed.topics.status, true);
    db = openTestPool(bed.database.url);
    http = new Pool(`https://127.0.0.1:${port}`, {
      connections: CONCURRENCY,
      connect: { ca: tls.ca },
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
  }, 240_000);

  afterAll(async () => {
    await rss?.stop();
    await Promise.allSettled([http?.close(), status?.stop(), db?.end()]);
    await bed?.stop();
  }, 120_000);

  const statusEvents = (type: string) =>
    status.json<StatusEvent>().filter((event) => event.type === type);

  it('stores only real webhooks, answers every generated request 4xx without a stack trace, and delivers each real one once', async () => {
    const startedAt = performance.now();
    const pid = bed.worker.pid;
    const sampler = new RssSampler(bed.worker);
    rss = sampler;

    // 1. Payments to pay and to aim at, created through Kafka like any.
    const recipes = fc.sample(validPaymentRequestRecipe(), { numRuns: PAID_PAYMENTS, seed });
    const orders: ErpCase[] = recipes.map((recipe, n) => recipe(caseIds(seed, n, 'WH')));
    await sendBatched(
      bed.producer,
      bed.topics.orders,
      orders.map((order) => ({
        key: order.key,
        value: order.value,
        partition: order.key === null ? 0 : partitionOfKey(order.key, PARTITIONS),
      })),
    );
    const ours = new Set(orders.map((order) => order.orderId));
    await status.waitFor(
      () => statusEvents('payment.created').filter((e) => ours.has(e.orderId)).length === ours.size,
      90_000,
      `${ours.size} payments to be created`,
    );
    const sandboxPayments = (
      await sandboxControl<{ payments: SandboxPayment[] }>(bed.sandbox, 'GET', '/payments')
    ).payments.filter((payment) => ours.has(payment.body.payment.internalRef ?? ''));
    const real = sandboxPayments.map((payment) => realPaymentOf(payment));
    const tokenOf = new Map(sandboxPayments.map((p, n) => [p.id, real[n]?.token ?? '']));

    // 2. The generated requests, with the payers paying in between.
    const requests = generateWebhookRequests(runs, seed, real);
    const payAt = new Map(
      sandboxPayments.map((payment, n) => [
        Math.floor(((n + 1) * requests.length) / (sandboxPayments.length + 1)),
        payment.id,
      ]),
    );
    const answers = await sendAll(http, requests, async (position) => {
      const paymentId = payAt.get(position);
      if (paymentId !== undefined) {
        await sandboxControl(bed.sandbox, 'POST', `/payments/${paymentId}/simulate`, {
          action: 'paid',
        });
      }
    });
    const sentMs = performance.now() - startedAt;

    // 3. Webhooks refused for the flood (429) are retried by Payflow later: let its clock run.
    const ourDeliveries = async (): Promise<Delivery[]> =>
      (
        await sandboxControl<{ deliveries: Delivery[] }>(bed.sandbox, 'GET', '/webhook-deliveries')
      ).deliveries.filter((delivery) => tokenOf.has(delivery.paymentId));
    for (let round = 0; round < 10; round++) {
      const pending = (await ourDeliveries()).filter((d) => !d.delivered && !d.givenUp);
      if (pending.length === 0) break;
      await sandboxControl(bed.sandbox, 'POST', '/clock/advance', { minutes: 60 });
    }
    const deliveries = await ourDeliveries();
    const paidIds = new Set(sandboxPayments.map((payment) => payment.id));
    const changed = () =>
      statusEvents('payment.status_changed').filter((e) => paidIds.has(e.paymentId ?? ''));
    await status.until(
      () => new Set(changed().map((event) => event.paymentId)).size === paidIds.size,
      60_000,
    );
    // A second event for a payment (a webhook taken twice) would show within this pause.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const memory = await sampler.stop();

    // 4. What the receiver answered.
    const failures: string[] = [];
    requests.forEach((request, n) => {
      const answer = answers[n];
      const problem = (text: string) =>
        failures.push(
          `#${request.index} ${request.kind} ${request.method} ${request.path.slice(0, 80)}: ${request.detail.slice(0, 200)} → ${text}`,
        );
      if (answer === undefined) problem('no answer recorded');
      else if (answer.error !== undefined) {
        // A server may close the connection instead of reading a body over its limit
        // (RFC 9110, 413): a reset while writing such a body is a refusal. Nothing of it may
        // be stored (checked below with every other request).
        const overLimit = (request.body?.length ?? 0) > BODY_LIMIT_BYTES;
        if (!(overLimit && isClosedUnder(answer))) problem(`request failed: ${answer.error}`);
      } else if (answer.status < 400 || answer.status >= 500) {
        problem(`answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      } else if (STACK_TRACE.test(answer.body)) {
        problem(`answered ${answer.status} with a stack trace: ${answer.body.slice(0, 300)}`);
      }
    });

    // 5. The inbox: one row per delivered real webhook, nothing else.
    const expectedKeys = new Set(
      deliveries
        .filter((delivery) => delivery.delivered)
        .map((delivery) =>
          dedupeKey(
            tokenOf.get(delivery.paymentId) ?? '',
            delivery.kind,
            delivery.deliveryId,
            Buffer.alloc(0),
          ),
        ),
    );
    const { rows } = await db.query<{ dedupe_key: string; body: Buffer }>(
      'SELECT dedupe_key, body FROM webhook_inbox',
    );
    for (const row of rows) {
      if (!expectedKeys.has(row.dedupe_key)) {
        failures.push(
          `stored a webhook Payflow never sent: ${row.body.toString('utf8').slice(0, 200)}`,
        );
      }
    }
    const stored = new Set(rows.map((row) => row.dedupe_key));
    for (const key of expectedKeys) {
      if (!stored.has(key)) failures.push(`a delivered webhook is not in the inbox (${key})`);
    }
    for (const delivery of deliveries.filter((d) => !d.delivered)) {
      failures.push(
        `a real webhook was never delivered: ${delivery.kind} of ${delivery.paymentId}, attempts ${delivery.attempts.map((a) => a.status).join(',')}`,
      );
    }

    // 6. One status change per payment paid.
    const perPayment = new Map<string, StatusEvent[]>();
    for (const event of changed()) {
      const list = perPayment.get(event.paymentId ?? '') ?? [];
      list.push(event);
      perPayment.set(event.paymentId ?? '', list);
    }
    for (const paymentId of paidIds) {
      const events = perPayment.get(paymentId) ?? [];
      if (events.length !== 1 || events[0]?.data.providerStatus !== 'SUCCESS') {
        failures.push(
          `payment ${paymentId}: expected one payment.status_changed to SUCCESS, got ${JSON.stringify(events.map((e) => e.data.providerStatus))}`,
        );
      }
    }

    const live = await bed.worker.get('/health/live');
    const byStatus = countBy(answers, (answer) => String(answer.error ?? answer.status));
    const resent = answers.filter((answer) => answer.resent === true).length;
    process.stdout.write(
      `webhooks property: ${requests.length} requests in ${(sentMs / 1000).toFixed(1)} s, ` +
        `${((performance.now() - startedAt) / 1000).toFixed(1)} s in all; answers ${JSON.stringify(Object.fromEntries(byStatus))}; ` +
        `${resent} resent after a closed connection; ` +
        `${rows.length} stored for ${deliveries.length} real deliveries; worker RSS peak ${memory.peakMb.toFixed(0)} MB\n`,
    );
    if (failures.length > 0) {
      throw new Error(
        `${failures.length} problems with generated webhook requests (seed ${seed}, ${runs} runs; worker log ${bed.logFile}):\n${listSome(failures, 25)}`,
      );
    }
    expect({
      samePid: bed.worker.pid === pid,
      alive: bed.worker.alive,
      live: live.status,
      fatal: bed.worker.fatalCount,
    }).toEqual({ samePid: true, alive: true, live: 200, fatal: 0 });
    expect(memory.peakMb).toBeLessThan(RSS_LIMIT_MB);
  }, 900_000);
});

/** The token and api key the worker gave Payflow for a payment (its callback). */
function realPaymentOf(payment: SandboxPayment): RealPayment {
  const url = payment.body.callback?.url ?? '';
  const token = /\/webhooks\/payflow\/([^/]+)\//.exec(url)?.[1];
  const apiKey = payment.body.callback?.api_key;
  if (token === undefined || typeof apiKey !== 'string') {
    throw new Error(`payment ${payment.id} has no callback with a token and api_key`);
  }
  return { token: decodeURIComponent(token), apiKey };
}

/**
 * Sends every request, `CONCURRENCY` at a time, calling `before(position)` first (in order:
 * the next request waits for it). Never rejects: a failed request is an answer with `error`.
 */
async function sendAll(
  http: Pool,
  requests: readonly WebhookRequest[],
  before: (position: number) => Promise<void>,
): Promise<Answer[]> {
  const answers: Answer[] = new Array<Answer>(requests.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let position = next++; position < requests.length; position = next++) {
      await before(position);
      const request = requests[position];
      if (request !== undefined) answers[position] = await send(http, request);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, () => lane()));
  return answers;
}

/**
 * One request; sent once more when the connection was closed under it (a keep-alive
 * connection the server closed after an earlier malformed request, e.g. a body over the
 * limit, can be picked for the next request before its end is seen).
 */
async function send(http: Pool, request: WebhookRequest): Promise<Answer> {
  let answer = await sendOnce(http, request);
  // Up to three tries: a body over the limit can meet the server's close again.
  for (let retry = 1; retry < 3 && isClosedUnder(answer); retry++) {
    answer = { ...(await sendOnce(http, request)), resent: true };
  }
  return answer;
}

const isClosedUnder = (answer: Answer): boolean =>
  answer.error !== undefined && /ECONNRESET|UND_ERR_SOCKET|EPIPE/.test(answer.error);

async function sendOnce(http: Pool, request: WebhookRequest): Promise<Answer> {
  try {
    const response = await http.request({
      method: request.method,
      path: request.path,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    const body = await response.body.text();
    return { status: response.statusCode, body, error: undefined };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    return {
      status: 0,
      body: '',
      error: `${typeof code === 'string' ? code : 'error'}: ${message}`,
    };
  }
}

function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + 1);
  return counts;
}
