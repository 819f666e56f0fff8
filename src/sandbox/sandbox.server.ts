/**
 * A stateful, in-memory Payflow simulator on fastify: all 18 endpoints, OAuth client
 * credentials with scopes, the organization rules, webhooks with the spec's retries on a
 * virtual clock, payer simulation, fault injection and a control API at /sandbox/*.
 *
 *   const sandbox = await startSandbox({ port: 0 });
 *   // group A at sandbox.url, group B at sandbox.partnerUrl
 *   await sandbox.close();
 */
import { rootCertificates } from 'node:tls';
import { fastify, type FastifyError, type FastifyInstance } from 'fastify';
import { Agent } from 'undici';
import { silentLogger, type AppLogger } from '../logging/logger.js';
import { VirtualClock } from './state/clock.js';
import { registerControlRoutes } from './control/control.routes.js';
import { ApiError } from './http/errors.js';
import { FaultRegistry } from './faults/faults.js';
import { LateApplications } from './faults/late-applications.js';
import { acceptJsonOnly } from './http/media-types.js';
import { RouteMethods } from './http/methods.js';
import { PARTNER_PREFIX, registerPartnerRoutes } from './partner/partner.routes.js';
import { registerPaymentRoutes } from './payments/payments.routes.js';
import { PartnerService } from './partner/partner.service.js';
import { PaymentLifecycle } from './payments/payment-lifecycle.js';
import { PaymentsService } from './payments/payments.service.js';
import { pathOf, type SandboxContext } from './http/routing.js';
import { Scheduler } from './state/scheduler.js';
import { Shapes, type ShapeName } from './payments/shapes.js';
import { RequestTraces } from './http/request-traces.js';
import { PayerSimulation } from './payments/simulation.js';
import { DEFAULT_SETTLEMENT_TIMING, type SettlementTiming } from './settlement/booking.js';
import { DEFAULT_RETENTION, SandboxState } from './state/state.js';
import { DEFAULT_MAX_WEBHOOK_DELIVERIES, WebhookDispatcher } from './webhooks/webhooks.js';

/** 16 MiB: room for a 10 MiB document, which is about 13.4 MiB in base64 JSON. */
export const BODY_LIMIT_BYTES = 16 * 1024 * 1024;
export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface SandboxOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Fixed latency added to every Payflow call (not to /sandbox/* calls). Default 0. */
  latencyMs?: number;
  /** Lifetime of access tokens, on the virtual clock. Default 3600. */
  tokenTtlSeconds?: number;
  /** Extra CA certificate(s), PEM, trusted for webhook HTTPS besides the system roots. */
  webhookCa?: string | Buffer;
  /** Time-out of one webhook attempt. Default 10 s. */
  webhookTimeoutMs?: number;
  /** Request body limit (413 above). Default 16 MiB (docs/assumptions.md). */
  bodyLimitBytes?: number;
  /** Webhook domains whitelisted at start and after a reset. Default localhost, 127.0.0.1. */
  webhookWhitelist?: readonly string[];
  /** Secret of the built-in client `sandbox-client`, at start and after a reset. Default sandbox-secret. */
  defaultClientSecret?: string;
  /** Default: silent. Nothing is logged per request. */
  logger?: AppLogger;
  /**
   * How answers and webhook bodies are written where the spec leaves the shape open:
   * `standard` (default, docs/assumptions.md) or `alternate` (shapes.ts).
   */
  shapes?: ShapeName;
  /**
   * What is kept at most, so that memory stays flat over a long run (docs/sandbox.md):
   * payments (default 25,000), settlement movements (500,000), webhook deliveries (20,000).
   */
  retention?: Partial<SandboxRetention>;
  /**
   * The share of settlement lines booked a night late (percent, default 10) and the seed
   * of that choice (default 29), at start and after a reset (settlement/booking.ts).
   */
  settlement?: Partial<SettlementTiming>;
}

export interface SandboxRetention {
  maxPayments: number;
  maxMovements: number;
  maxWebhookDeliveries: number;
}

export interface SandboxHandle {
  /** Group A base address, e.g. http://127.0.0.1:4010 */
  url: string;
  /** Group B base address: url + '/partner' */
  partnerUrl: string;
  /** Control API base address: url + '/sandbox' */
  controlUrl: string;
  port: number;
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? silentLogger();
  const agent = new Agent({
    connect: {
      timeout: options.webhookTimeoutMs ?? WEBHOOK_TIMEOUT_MS,
      ...(options.webhookCa === undefined
        ? {}
        : { ca: [...rootCertificates, options.webhookCa.toString()] }),
    },
    keepAliveTimeout: 4_000,
  });
  const clock = new VirtualClock();
  const state = new SandboxState(
    options.webhookWhitelist,
    options.defaultClientSecret,
    {
      maxPayments: options.retention?.maxPayments ?? DEFAULT_RETENTION.maxPayments,
      maxMovements: options.retention?.maxMovements ?? DEFAULT_RETENTION.maxMovements,
    },
    { ...DEFAULT_SETTLEMENT_TIMING, ...options.settlement },
  );
  const faults = new FaultRegistry();
  const lateApplications = new LateApplications();
  const onJobError = (error: unknown): void => logger.error({ err: error }, 'sandbox job failed');
  // The scheduler awaits the dispatcher's first attempts; the dispatcher schedules retries.
  const scheduler = new Scheduler(clock, () => webhooks.settle(), onJobError);
  const webhooks = new WebhookDispatcher({
    clock,
    agent,
    logger,
    timeoutMs: options.webhookTimeoutMs ?? WEBHOOK_TIMEOUT_MS,
    whitelist: () => state.whitelist,
    schedule: (dueAt, job, owner) => scheduler.schedule(dueAt, job, owner),
    cancel: (owner) => scheduler.cancel(owner),
    maxDeliveries: options.retention?.maxWebhookDeliveries ?? DEFAULT_MAX_WEBHOOK_DELIVERIES,
  });
  // A payment forgotten to keep the bound takes its scheduled debits with it.
  state.payments.onForget((payment) => scheduler.cancel(payment.id));
  const shapes = new Shapes(options.shapes ?? 'standard');
  const lifecycle = new PaymentLifecycle(state, scheduler, webhooks, shapes);
  const context: SandboxContext = {
    state,
    clock,
    scheduler,
    webhooks,
    payments: new PaymentsService(lifecycle),
    partner: new PartnerService(lifecycle),
    simulation: new PayerSimulation(lifecycle),
    faults,
    lateApplications,
    logger,
    shapes,
    latencyMs: options.latencyMs ?? 0,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    traces: new RequestTraces(),
  };

  let baseUrl = '';
  const app = buildApp(context, options.bodyLimitBytes ?? BODY_LIMIT_BYTES, () => baseUrl);
  let address: string;
  try {
    address = await app.listen({ port: options.port ?? 0, host });
  } catch (error) {
    scheduler.stop();
    await agent.destroy();
    throw error;
  }
  const port = new URL(address).port;
  baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.debug({ url: baseUrl }, 'payflow sandbox listening');

  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    partnerUrl: `${baseUrl}${PARTNER_PREFIX}`,
    controlUrl: `${baseUrl}/sandbox`,
    port: Number(port),
    close: () =>
      (closing ??= (async () => {
        scheduler.stop();
        webhooks.reset();
        // Late effects still pending are dropped: a closing sandbox waits for none of them.
        await lateApplications.close();
        await app.close();
        await agent.destroy();
      })()),
  };
}

function buildApp(
  context: SandboxContext,
  bodyLimit: number,
  baseUrl: () => string,
): FastifyInstance {
  const app = fastify({
    logger: false,
    bodyLimit,
    forceCloseConnections: true,
    return503OnClosing: true,
    keepAliveTimeout: 65_000,
  });

  acceptJsonOnly(app);
  app.addHook('onRequest', (request, _reply, done) => {
    const path = pathOf(request.url);
    if (!path.startsWith('/sandbox')) {
      const header = (name: string): string | undefined => {
        const value = request.headers[name];
        return Array.isArray(value) ? value[0] : value;
      };
      context.traces.record(request.method, path, header('traceparent'), header('tracestate'));
    }
    done();
  });

  app.setErrorHandler((error: FastifyError | ApiError, _request, reply) => {
    if (error instanceof ApiError) {
      return reply.code(error.status).headers(error.headers).send(error.body);
    }
    const { status, code, message } = describeFrameworkError(error, bodyLimit);
    if (status >= 500) context.logger.error({ err: error }, 'sandbox request failed');
    return reply.code(status).type('application/json').send({ code, message });
  });

  const routeMethods = new RouteMethods();
  routeMethods.track(app);
  app.setNotFoundHandler((request, reply) => {
    const allowed = routeMethods.allowed(pathOf(request.url));
    if (allowed.length > 0) {
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send({
          code: 'method_not_allowed',
          message: `${request.method} is not allowed here; allowed: ${allowed.join(', ')}`,
        });
    }
    return reply
      .code(404)
      .send({ code: 'not_found', message: `no route ${request.method} ${request.url}` });
  });

  registerPaymentRoutes(app, context);
  registerPartnerRoutes(app, context);
  registerControlRoutes(app, context, baseUrl);
  return app;
}

/** Fastify's own errors (body parsing, limits) in the `{ code, message }` shape, never a stack. */
function describeFrameworkError(
  error: FastifyError,
  bodyLimit: number,
): {
  status: number;
  code: string;
  message: string;
} {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        code: 'payload_too_large',
        message: `the body exceeds ${bodyLimit} bytes`,
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: 'unsupported_media_type', message: 'unsupported content type' };
    default:
      break;
  }
  const status = error.statusCode ?? 500;
  if (status === 400) {
    return {
      status,
      code: 'bad_request',
      message: `the body could not be parsed: ${error.message}`,
    };
  }
  if (status >= 400 && status < 500) return { status, code: 'bad_request', message: error.message };
  return { status: 500, code: 'internal_error', message: 'internal error' };
}
