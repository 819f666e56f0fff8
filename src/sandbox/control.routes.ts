/**
 * The control API at /sandbox/* (no auth, no latency, no faults): CONTRACT §7 plus
 * the clock, payment-method, redelivery, hold/release, stats and OpenAPI extras.
 */
import type { FastifyInstance } from 'fastify';
import { DEFAULT_LINK_DOMAIN, DEFAULT_PROFILE_ID } from './state.js';
import { isoOf } from './clock.js';
import {
  advanceSchema,
  clientSchema,
  deliveriesQuerySchema,
  holdSchema,
  organizationSchema,
  paymentMethodsSchema,
  paymentsQuerySchema,
  simulateSchema,
  whitelistSchema,
} from './control.schemas.js';
import { notFound, parseOr422, unprocessable } from './errors.js';
import { faultSpecSchema, faultView } from './faults.js';
import { buildOpenApiDocument } from './openapi.js';
import type { SandboxContext } from './routing.js';
import { sandboxPaymentView } from './views.js';
import { deliveryView } from './webhooks.js';

interface IdParams {
  id: string;
}

export function registerControlRoutes(
  app: FastifyInstance,
  context: SandboxContext,
  baseUrl: () => string,
): void {
  const { state, clock, scheduler, webhooks, simulation, faults } = context;
  let openApi: unknown;

  app.post('/sandbox/reset', () => {
    webhooks.reset();
    scheduler.clear();
    faults.clear();
    clock.reset();
    state.reset();
    return { ok: true };
  });

  app.post('/sandbox/clients', (request, reply) => {
    const body = parseOr422(clientSchema, request.body, 'body');
    const unknown = body.organizationIds.flatMap((id, index) =>
      state.organizations.has(id)
        ? []
        : [
            {
              loc: ['body', 'organizationIds', index],
              msg: `no organization ${id}: create it first`,
              type: 'value_error.unknown_organization',
            },
          ],
    );
    if (unknown.length > 0) throw unprocessable(unknown);
    const client = { ...body, scopes: [...new Set(body.scopes)] };
    state.clients.set(client.clientId, client);
    void reply.code(201);
    return {
      clientId: client.clientId,
      scopes: client.scopes,
      organizationIds: client.organizationIds,
    };
  });

  app.post('/sandbox/organizations', (request, reply) => {
    const body = parseOr422(organizationSchema, request.body, 'body');
    const previous = state.organizations.get(body.id);
    const organization = {
      id: body.id,
      name: body.name ?? previous?.name ?? body.id,
      profiles: body.profiles ?? previous?.profiles ?? [{ id: DEFAULT_PROFILE_ID }],
      linkDomain: body.linkDomain ?? previous?.linkDomain ?? DEFAULT_LINK_DOMAIN,
      currency: body.currency ?? previous?.currency ?? 'NOK',
    };
    state.organizations.set(organization.id, organization);
    void reply.code(201);
    return organization;
  });

  app.get('/sandbox/webhook-whitelist', () => ({ domains: state.whitelist }));
  app.put('/sandbox/webhook-whitelist', (request) => {
    state.whitelist = [...new Set(parseOr422(whitelistSchema, request.body, 'body').domains)];
    return { domains: state.whitelist };
  });

  app.put('/sandbox/payment-methods', (request) => {
    state.paymentMethods = parseOr422(paymentMethodsSchema, request.body, 'body').paymentMethods;
    return { paymentMethods: state.paymentMethods };
  });

  app.get('/sandbox/payments', (request) => {
    const { organizationId } = parseOr422(paymentsQuerySchema, request.query, 'query');
    const all = [...state.payments.values()];
    return {
      payments: all
        .filter(
          (payment) => organizationId === undefined || payment.organizationId === organizationId,
        )
        .map(sandboxPaymentView),
    };
  });

  app.get('/sandbox/payments/:id', (request) => {
    const { id } = request.params as IdParams;
    const payment = state.payments.get(id);
    if (!payment) throw notFound(`no payment ${id}`);
    return sandboxPaymentView(payment);
  });

  app.post('/sandbox/payments/:id/simulate', async (request) => {
    const { id } = request.params as IdParams;
    const body = parseOr422(simulateSchema, request.body, 'body');
    const sent = simulation.simulate(id, body.action, body.installmentId, clock.now());
    await webhooks.settleAll(sent);
    const payment = state.payments.get(id);
    return {
      payment: payment ? sandboxPaymentView(payment) : null,
      deliveries: sent.map(deliveryView),
    };
  });

  app.get('/sandbox/webhook-deliveries', (request) => {
    const filter = parseOr422(deliveriesQuerySchema, request.query, 'query');
    return { deliveries: webhooks.list(filter).map(deliveryView) };
  });

  app.post('/sandbox/webhook-deliveries/:id/redeliver', async (request) =>
    deliveryView(await webhooks.redeliver((request.params as IdParams).id)),
  );

  app.post('/sandbox/webhook-deliveries/:id/release', async (request) =>
    deliveryView(await webhooks.release((request.params as IdParams).id)),
  );

  app.post('/sandbox/webhook-hold', (request) => {
    const body = parseOr422(holdSchema, request.body, 'body');
    webhooks.setHold(body.paymentId, body.enabled);
    return body;
  });

  app.get('/sandbox/clock', () => ({ now: clock.nowIso(), offsetMinutes: clock.offsetMinutes }));

  app.post('/sandbox/clock/advance', async (request) => {
    const { minutes } = parseOr422(advanceSchema, request.body, 'body');
    const ran = await scheduler.advance(minutes * 60_000);
    return { now: clock.nowIso(), offsetMinutes: clock.offsetMinutes, jobsRun: ran };
  });

  app.get('/sandbox/faults', () => ({ faults: faults.list().map(faultView) }));
  app.post('/sandbox/faults', (request, reply) => {
    const fault = faults.add(parseOr422(faultSpecSchema, request.body, 'body'));
    void reply.code(201);
    return faultView(fault);
  });
  app.delete('/sandbox/faults', () => {
    const removed = faults.size;
    faults.clear();
    return { removed };
  });
  app.delete('/sandbox/faults/:id', (request) => {
    const { id } = request.params as IdParams;
    if (!faults.remove(id)) throw notFound(`no fault ${id}`);
    return { removed: 1 };
  });

  app.get('/sandbox/stats', () => ({
    payments: state.payments.size,
    tokens: state.tokens.size,
    webhookDeliveries: webhooks.list().length,
    scheduledJobs: scheduler.size,
    now: isoOf(clock.now()),
    cpuMicros: process.cpuUsage(),
    rssBytes: process.memoryUsage().rss,
  }));

  app.get('/sandbox/openapi.json', () => {
    openApi ??= buildOpenApiDocument(baseUrl());
    return openApi;
  });
}
