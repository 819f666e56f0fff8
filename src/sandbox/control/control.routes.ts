/**
 * The control API at /sandbox/* (no auth, no latency, no faults): CONTRACT §7 plus
 * the clock, payment-method, redelivery, hold/release, settlement seeding, client secret
 * rotation, stats and OpenAPI extras.
 *
 * Every answer does work bounded by what it returns, never by what the sandbox holds: the
 * listings are paged (`limit`, `cursor` → `nextCursor`), and seeding many settlement rows
 * gives the event loop a turn every SEED_CHUNK rows.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../../errors/app-error.js';
import { toMinorUnits } from '../../money/money.js';
import {
  DEFAULT_LINK_DOMAIN,
  DEFAULT_ORGANIZATION_ID,
  DEFAULT_PROFILE_ID,
  type Movement,
  type Organization,
  type SandboxState,
} from '../state/state.js';
import { isoOf, startOfUtcDate } from '../state/clock.js';
import { changeClientSecret } from '../http/auth.js';
import {
  advanceSchema,
  clientSchema,
  clientSecretSchema,
  deliveriesQuerySchema,
  holdSchema,
  organizationSchema,
  paymentMethodsSchema,
  paymentsQuerySchema,
  settlementSeedSchema,
  simulateSchema,
  whitelistSchema,
  type SettlementSeed,
} from './control.schemas.js';
import { notFound, parseOr422, unprocessable, type Detail } from '../http/errors.js';
import { faultSpecSchema, faultView } from '../faults/faults.js';
import { newObjectId } from '../state/ids.js';
import { buildOpenApiDocument } from '../openapi/openapi.js';
import type { SandboxContext } from '../http/routing.js';
import { sandboxPaymentView } from './views.js';
import { deliveryView } from '../webhooks/webhooks.js';
import { feeMinor } from '../settlement/fees.js';
import { registerSettlementControlRoutes } from '../settlement/settlement.routes.js';

interface IdParams {
  id: string;
}

export function registerControlRoutes(
  app: FastifyInstance,
  context: SandboxContext,
  baseUrl: () => string,
): void {
  const { state, clock, scheduler, webhooks, simulation, faults, lateApplications } = context;
  let openApi: unknown;

  app.post('/sandbox/reset', () => {
    webhooks.reset();
    scheduler.clear();
    faults.clear();
    // A late effect of an earlier test must not land in the state this reset starts.
    lateApplications.reset();
    clock.reset();
    state.reset();
    context.traces.clear();
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

  // A rotation: the old secret stops working at once; issued tokens live on (auth.ts).
  app.post('/sandbox/clients/:clientId/secret', (request, reply) => {
    const { clientId } = request.params as { clientId: string };
    const { clientSecret } = parseOr422(clientSecretSchema, request.body, 'body');
    if (!changeClientSecret(state, clientId, clientSecret)) throw notFound(`no client ${clientId}`);
    void reply.code(204).send();
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

  app.post('/sandbox/settlements', async (request, reply) => {
    const seed = parseOr422(settlementSeedSchema, request.body, 'body');
    const organizationId = seed.organizationId ?? DEFAULT_ORGANIZATION_ID;
    const organization = state.organizations.get(organizationId);
    if (!organization) throw notFound(`no organization ${organizationId}`);
    const booked = await seedSettlements(state, organization, seed);
    const malformedLines = seed.malformedLines ?? [];
    state.addMalformedSettlementLines(organization.id, seed.date, malformedLines);
    void reply.code(201);
    return {
      organizationId: organization.id,
      date: seed.date,
      booked,
      malformedLines: malformedLines.length,
    };
  });

  registerSettlementControlRoutes(app, state);

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
    const { organizationId, limit, cursor } = parseOr422(
      paymentsQuerySchema,
      request.query,
      'query',
    );
    const page = state.payments.page(
      cursor,
      limit,
      organizationId === undefined
        ? undefined
        : (payment) => payment.organizationId === organizationId,
    );
    return { payments: page.items.map(sandboxPaymentView), nextCursor: page.nextCursor };
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
    const { limit, cursor, ...filter } = parseOr422(deliveriesQuerySchema, request.query, 'query');
    const page = webhooks.page(filter, cursor, limit);
    return { deliveries: page.items.map(deliveryView), nextCursor: page.nextCursor };
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

  app.get('/sandbox/request-traces', (request) => {
    const { traceId } = request.query as { traceId?: string };
    return { requests: context.traces.find(traceId) };
  });

  app.get('/sandbox/stats', () => {
    const memory = process.memoryUsage();
    return {
      payments: state.payments.size,
      tokens: state.tokens.size,
      webhookDeliveries: webhooks.size,
      settlementMovements: state.movements.size,
      scheduledJobs: scheduler.size,
      lateApplications: lateApplications.stats(),
      limits: {
        payments: state.payments.limit,
        webhookDeliveries: webhooks.limit,
        settlementMovements: state.movements.limit,
      },
      now: isoOf(clock.now()),
      cpuMicros: process.cpuUsage(),
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
    };
  });

  app.get('/sandbox/openapi.json', () => {
    openApi ??= buildOpenApiDocument(baseUrl());
    return openApi;
  });
}

const DAY_MS = 86_400_000;
/** Synthetic settlement rows booked between two turns of the event loop. */
const SEED_CHUNK = 5_000;
/** When a seeded movement without bookedAt is booked: noon UTC of its date. */
const DEFAULT_BOOKED_OFFSET_MS = 12 * 3_600_000;

/**
 * Books the seed's movements, then its `count` synthetic ones, on the seed's date; returns
 * how many. Everything is checked before anything is booked. The synthetic rows are booked
 * SEED_CHUNK at a time, with a turn of the event loop between (a million of them would
 * otherwise hold every other request for seconds).
 */
async function seedSettlements(
  state: SandboxState,
  organization: Organization,
  seed: SettlementSeed,
): Promise<number> {
  const dayStart = startOfUtcDate(seed.date) ?? 0; // the schema accepts calendar dates only
  const details: Detail[] = [];
  const resolved = (seed.movements ?? []).map((movement, index) => {
    const loc = ['body', 'movements', index];
    const payment =
      movement.paymentId === undefined ? undefined : state.payments.get(movement.paymentId);
    if (payment && payment.organizationId !== organization.id) {
      details.push({
        loc: [...loc, 'paymentId'],
        msg: `payment ${payment.id} belongs to organization ${payment.organizationId}`,
        type: 'value_error.payment_organization',
      });
    }
    const currency = movement.currency ?? payment?.currency ?? organization.currency;
    let grossMinor = 0;
    try {
      grossMinor = toMinorUnits(movement.grossAmount, currency);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      details.push({
        loc: [...loc, 'grossAmount'],
        msg: error.message,
        type: 'value_error.amount',
      });
    }
    const type = movement.type ?? (grossMinor < 0 ? 'refund' : 'payment');
    if ((type === 'refund' && grossMinor > 0) || (type === 'payment' && grossMinor < 0)) {
      details.push({
        loc: [...loc, 'grossAmount'],
        msg: 'a refund is negative, a payment is not',
        type: 'value_error.amount_sign',
      });
    }
    return { movement, payment, currency, grossMinor, type };
  });
  if (details.length > 0) throw unprocessable(details);

  // Payments the sandbox does not know get one payment number each, per request.
  const generatedNumbers = new Map<string, number>();
  const booked: Movement[] = resolved.map(({ movement, payment, currency, grossMinor, type }) => {
    const bookedAt =
      movement.bookedAt === undefined
        ? dayStart + DEFAULT_BOOKED_OFFSET_MS
        : Date.parse(movement.bookedAt);
    const paymentId = movement.paymentId ?? newObjectId(bookedAt);
    let paymentNumber = payment?.number ?? generatedNumbers.get(paymentId);
    if (paymentNumber === undefined) {
      paymentNumber = state.nextPaymentNumber++;
      generatedNumbers.set(paymentId, paymentNumber);
    }
    return {
      id: newObjectId(bookedAt),
      organizationId: organization.id,
      paymentId,
      paymentNumber,
      installmentId: movement.installmentId ?? null,
      internalRef: movement.internalRef ?? payment?.internalRef ?? null,
      orderNumber: movement.orderNumber ?? payment?.orderNumber ?? `SB-${paymentNumber}`,
      type,
      currency,
      grossMinor,
      feeMinor: feeMinor(grossMinor, currency, movement.feeMethod ?? 'seeded', type),
      bookedAt,
    };
  });
  for (const movement of booked) state.movements.add(movement);

  // Synthetic rows: 100 + i mod 997 whole units and (7 i) mod 100 hundredths (whole units
  // only without minor units), every 10th a refund; booked in order over the UTC day.
  const count = seed.count ?? 0;
  const unit = toMinorUnits('1', organization.currency);
  const hundredth = unit >= 100 ? toMinorUnits('0.01', organization.currency) : 0;
  for (let i = 0; i < count; i += 1) {
    if (i > 0 && i % SEED_CHUNK === 0) await yieldToEventLoop();
    const bookedAt = dayStart + Math.floor((i * DAY_MS) / count);
    const minor = (100 + (i % 997)) * unit + ((i * 7) % 100) * hundredth;
    const refund = i % 10 === 9;
    const gross = refund ? -minor : minor;
    const paymentNumber = state.nextPaymentNumber++;
    state.movements.add({
      id: newObjectId(bookedAt),
      organizationId: organization.id,
      paymentId: newObjectId(bookedAt),
      paymentNumber,
      installmentId: null,
      internalRef: null,
      orderNumber: `SB-${paymentNumber}`,
      type: refund ? 'refund' : 'payment',
      currency: organization.currency,
      grossMinor: gross,
      feeMinor: feeMinor(gross, organization.currency, 'seeded', refund ? 'refund' : 'payment'),
      bookedAt,
    });
  }
  return booked.length + count;
}
