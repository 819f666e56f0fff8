/**
 * How a Payflow route runs: the fixed latency (SANDBOX_LATENCY_MS), then fault injection,
 * then bearer authentication, scope (only where the spec shows one) and organization,
 * then the handler. Handlers return
 * the body; errors are ApiError and reach the server's error handler.
 *
 * A request runs to its end whether or not its client is still there: nothing here watches
 * the connection (no `request.signal`), so a client that gives up during a latency fault
 * does not stop the handler from taking effect after the wait, as a real server would not.
 * A fault with `applyDelayMs` answers first and hands the handler, with the request as
 * received (method, path, headers, body), to `lateApplications`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { AppLogger } from '../../logging/logger.js';
import type { PayflowScope } from '../../payflow/wire/payflow.schemas.js';
import { authenticate, resolveOrganization } from './auth.js';
import type { VirtualClock } from '../state/clock.js';
import { ApiError } from './errors.js';
import type { Fault, FaultRegistry } from '../faults/faults.js';
import type { LateApplications } from '../faults/late-applications.js';
import type { PartnerService } from '../partner/partner.service.js';
import type { RequestTraces } from './request-traces.js';
import type { PaymentsService } from '../payments/payments.service.js';
import type { Scheduler } from '../state/scheduler.js';
import type { Shapes } from '../payments/shapes.js';
import type { PayerSimulation } from '../payments/simulation.js';
import type { AccessToken, Client, Organization, SandboxState } from '../state/state.js';
import type { WebhookDispatcher } from '../webhooks/webhooks.js';

export interface SandboxContext {
  state: SandboxState;
  clock: VirtualClock;
  scheduler: Scheduler;
  webhooks: WebhookDispatcher;
  payments: PaymentsService;
  partner: PartnerService;
  simulation: PayerSimulation;
  faults: FaultRegistry;
  /** Handlers of requests already answered by an `applyDelayMs` fault, still to run. */
  lateApplications: LateApplications;
  logger: AppLogger;
  /** How answers are written (SANDBOX_SHAPES): every Payflow answer goes through it. */
  shapes: Shapes;
  latencyMs: number;
  tokenTtlSeconds: number;
  /** The trace headers of the Payflow API requests received (GET /sandbox/request-traces). */
  traces: RequestTraces;
}

export interface PayflowCall {
  request: FastifyRequest;
  reply: FastifyReply;
  /** Virtual time of the call. */
  now: number;
}
export interface AuthedCall extends PayflowCall {
  client: Client;
  token: AccessToken;
}
export interface OrganizationCall extends AuthedCall {
  organization: Organization;
}

type Handler<C> = (call: C) => unknown;

/** A Payflow route without authentication (the token endpoint). */
export function payflowRoute(
  context: SandboxContext,
  handler: Handler<PayflowCall>,
): RouteHandlerMethod {
  return async function payflowHandler(request, reply) {
    if (context.latencyMs > 0) await sleep(context.latencyMs);
    const fault =
      context.faults.size > 0
        ? context.faults.take(request.method, pathOf(request.url))
        : undefined;
    if (fault?.latencyMs) await sleep(fault.latencyMs);
    const answers = fault !== undefined && (fault.status !== undefined || fault.reset === true);
    if (answers && fault.applyDelayMs !== undefined) {
      // The request object outlives its answer: its headers, params and parsed body are
      // what the handler reads, even once the client has closed the connection.
      context.lateApplications.schedule(fault.applyDelayMs, () =>
        handler({ request, reply, now: context.clock.now() }),
      );
      return applyFault(fault, request, reply);
    }
    if (answers && !fault.afterProcessing) return applyFault(fault, request, reply);
    const call = { request, reply, now: context.clock.now() };
    if (!answers) return context.shapes.body(await handler(call));
    try {
      await handler(call);
    } catch {
      // The request reached Payflow; its answer (success or not) is lost.
    }
    return applyFault(fault, request, reply);
  };
}

/**
 * The scope of an endpoint the spec shows none for: a valid bearer token is enough. Only
 * POST /api/payments (create) and POST /api/refund (update) have a documented scope.
 */
export const TOKEN_ONLY = undefined;

/** A Payflow route that needs a valid bearer token and, when given, a scope. */
export function authedRoute(
  context: SandboxContext,
  scope: PayflowScope | typeof TOKEN_ONLY,
  handler: Handler<AuthedCall>,
): RouteHandlerMethod {
  return payflowRoute(context, (call) => {
    const { client, token } = authenticate(context.state, call.request, call.now, scope);
    return handler({ ...call, client, token });
  });
}

/** A Payflow route that also acts for one organization (X-Organization-Id rules). */
export function organizationRoute(
  context: SandboxContext,
  scope: PayflowScope | typeof TOKEN_ONLY,
  handler: Handler<OrganizationCall>,
): RouteHandlerMethod {
  return authedRoute(context, scope, (call) => {
    const organization = resolveOrganization(context.state, call.client, call.request);
    return handler({ ...call, organization });
  });
}

function applyFault(fault: Fault, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (fault.reset) {
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }
  const status = fault.status ?? 500;
  const headers: Record<string, string> = {};
  if (status === 429 || fault.retryAfterSeconds !== undefined) {
    headers['retry-after'] = String(fault.retryAfterSeconds ?? 1);
  }
  reply.removeHeader('content-type');
  throw new ApiError(status, faultBody(status), headers);
}

const FAULT_CODES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

function faultBody(status: number): unknown {
  if (status === 422) {
    return { detail: [{ loc: [], msg: 'injected fault', type: 'fault.injected' }] };
  }
  return { code: FAULT_CODES[status] ?? 'injected_fault', message: `injected fault (${status})` };
}

export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
