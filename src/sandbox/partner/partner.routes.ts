/** Group B, the partner API, under /partner (so the token URL is /partner/auth/token). */
import type { FastifyInstance } from 'fastify';
import {
  manualPaidSchema,
  printReceiptSchema,
  resendSchema,
  settlementQuerySchema,
} from '../../payflow/wire/payflow.schemas.js';
import { issueToken } from '../http/auth.js';
import { startOfUtcDate } from '../state/clock.js';
import { parseOr422 } from '../http/errors.js';
import { withBodies } from '../http/media-types.js';
import {
  TOKEN_ONLY,
  authedRoute,
  organizationRoute,
  payflowRoute,
  type SandboxContext,
} from '../http/routing.js';
import { settlementCsv } from './settlement-csv.js';

export const PARTNER_PREFIX = '/partner';

/** The shared query schema checks the YYYY-MM-DD form; the dates must also exist. */
const settlementQuery = settlementQuerySchema.superRefine((query, context) => {
  for (const key of ['from', 'to'] as const) {
    if (startOfUtcDate(query[key]) !== undefined) continue;
    context.addIssue({
      code: 'custom',
      path: [key],
      message: `${query[key]} is not a calendar date`,
      input: query[key],
      params: { type: 'value_error.date' },
    });
  }
});

interface PaymentParams {
  payment_id: string;
}

export function registerPartnerRoutes(app: FastifyInstance, context: SandboxContext): void {
  const { state, partner } = context;
  const p = PARTNER_PREFIX;

  // RFC 6749 §4.4.2: the token request is a form.
  withBodies(app, ['form'], (scope) => {
    scope.post(
      `${p}/auth/token`,
      payflowRoute(context, ({ request, reply, now }) => {
        const ttlSeconds = context.tokenTtlSeconds;
        const issued = issueToken(state, request, now, ttlSeconds);
        void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        return context.shapes.token(issued.accessToken, issued.scopes, ttlSeconds);
      }),
    );
  });

  app.get(
    `${p}/auth/ping`,
    authedRoute(context, TOKEN_ONLY, ({ client, token }) => context.shapes.ping(client, token)),
  );

  app.get(
    `${p}/auth/organizations`,
    authedRoute(context, TOKEN_ONLY, ({ client }) => ({
      organizations: client.organizationIds.flatMap((id) => {
        const organization = state.organizations.get(id);
        return organization ? [{ id: organization.id, name: organization.name }] : [];
      }),
    })),
  );

  app.get(
    `${p}/settlements/generate_csv`,
    organizationRoute(context, TOKEN_ONLY, ({ request, reply, organization }) => {
      const query = parseOr422(settlementQuery, request.query, 'query');
      void reply
        .type('text/csv; charset=utf-8')
        .header(
          'content-disposition',
          `attachment; filename="settlements-${organization.id}-${query.from}-${query.to}.csv"`,
        );
      // A stream: fastify pipes it (chunked), so a large file is never one string.
      return settlementCsv(
        state.movements,
        organization.id,
        query.from,
        query.to,
        state.malformedSettlementLines(organization.id),
      );
    }),
  );

  app.get(
    `${p}/payment-methods`,
    organizationRoute(context, TOKEN_ONLY, () => ({ paymentMethods: state.paymentMethods })),
  );

  app.post(
    `${p}/payment-methods/resend`,
    organizationRoute(context, TOKEN_ONLY, ({ request, organization, now }) =>
      partner.resend(organization, parseOr422(resendSchema, request.body, 'body'), now),
    ),
  );

  app.post(
    `${p}/payments/:payment_id/receipts/terminal/print`,
    organizationRoute(context, TOKEN_ONLY, ({ request, organization }) => {
      const body = parseOr422(printReceiptSchema, request.body ?? {}, 'body');
      const { payment_id } = request.params as PaymentParams;
      return partner.printReceipt(organization, payment_id, body.terminalId);
    }),
  );

  app.post(
    `${p}/payments/:payment_id/manual-paid`,
    organizationRoute(context, TOKEN_ONLY, ({ request, organization, now }) => {
      const body = parseOr422(manualPaidSchema, request.body ?? {}, 'body');
      const { payment_id } = request.params as PaymentParams;
      return partner.manualPaid(organization, payment_id, body.note, now);
    }),
  );
}
