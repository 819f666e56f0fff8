/** Bodies of the control API (/sandbox/*, CONTRACT §7 plus the extras). */
import { z } from 'zod';
import { isCurrency } from '../common/money.js';
import { PAYMENT_METHOD_TYPES } from '../payflow/payflow.schemas.js';
import { SIMULATE_ACTIONS } from './simulation.js';

const nonEmpty = z.string().min(1);
const domain = z
  .string()
  .min(1)
  .transform((value) => value.trim().toLowerCase().replace(/\.$/, ''));

export const clientSchema = z.object({
  clientId: nonEmpty,
  clientSecret: nonEmpty,
  scopes: z.array(nonEmpty),
  organizationIds: z.array(nonEmpty).min(1),
});

export const organizationSchema = z.object({
  id: nonEmpty,
  name: z.string().optional(),
  profiles: z.array(z.object({ id: nonEmpty, department: z.string().optional() })).optional(),
  linkDomain: domain.optional(),
  currency: z.string().refine(isCurrency, { message: 'must be an ISO 4217 currency' }).optional(),
});

export const whitelistSchema = z.object({ domains: z.array(domain) });

export const simulateSchema = z.object({
  action: z.enum(SIMULATE_ACTIONS),
  installmentId: nonEmpty.optional(),
});

export const advanceSchema = z.object({
  minutes: z
    .number()
    .min(0)
    .max(60 * 24 * 366 * 10),
});

export const holdSchema = z.object({ paymentId: nonEmpty, enabled: z.boolean() });

export const paymentMethodsSchema = z.object({
  paymentMethods: z.array(
    z.object({
      id: nonEmpty,
      name: z.string(),
      type: z.enum(PAYMENT_METHOD_TYPES),
      terminals: z.array(z.object({ id: nonEmpty, name: z.string() })).optional(),
      invoiceTypes: z.array(z.string()).optional(),
    }),
  ),
});

export const deliveriesQuerySchema = z.object({
  paymentId: z.string().optional(),
  kind: z.string().optional(),
});

export const paymentsQuerySchema = z.object({ organizationId: z.string().optional() });
