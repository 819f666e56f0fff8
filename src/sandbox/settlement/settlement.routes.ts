/**
 * The settlement controls of the control API (docs/assumptions.md), sandbox only:
 *
 * - POST /sandbox/payments/{id}/settlement: the payment's next line(s) of `kind` carry
 *   another gross (amount_mismatch; refund_mismatch with kind refund), are booked twice on
 *   two nights (settled_twice), never (not_settled) or `lateDays` late. 201 with the control.
 * - DELETE /sandbox/payments/{id}/settlement: drops the payment's pending controls.
 * - GET / PUT /sandbox/settlement-config: the share of lines booked a night late and its seed
 *   (0 for a test that wants every line on its day); a reset restores the start's.
 *
 * A line for a payment that does not exist (unknown_payment) is booked with
 * POST /sandbox/settlements and a `paymentId` the sandbox never issued.
 */
import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../../errors/app-error.js';
import { formatMinorUnits, toMinorUnits } from '../../money/money.js';
import {
  settlementControlSchema,
  settlementTimingSchema,
  type SettlementControlBody,
} from '../control/control.schemas.js';
import { notFound, parseOr422, unprocessable } from '../http/errors.js';
import type { Payment, SandboxState } from '../state/state.js';
import type { SettlementControl } from './booking.js';

interface IdParams {
  id: string;
}

export function registerSettlementControlRoutes(app: FastifyInstance, state: SandboxState): void {
  app.post('/sandbox/payments/:id/settlement', (request, reply) => {
    const { id } = request.params as IdParams;
    const body = parseOr422(settlementControlSchema, request.body, 'body');
    const payment = state.payments.get(id);
    if (!payment) throw notFound(`no payment ${id}`);
    const control = controlOf(payment, body);
    state.settlement.control(payment.id, body.kind, control, body.count);
    void reply.code(201);
    return {
      paymentId: payment.id,
      kind: body.kind,
      count: body.count,
      grossAmount:
        control.grossMinor === undefined
          ? null
          : formatMinorUnits(control.grossMinor, payment.currency),
      twice: control.twice ?? false,
      never: control.never ?? false,
      lateDays: control.lateDays ?? null,
    };
  });

  app.delete('/sandbox/payments/:id/settlement', (request) => {
    const { id } = request.params as IdParams;
    return { removed: state.settlement.clear(id) };
  });

  app.get('/sandbox/settlement-config', () => state.settlement.timing);

  app.put('/sandbox/settlement-config', (request) => {
    const body = parseOr422(settlementTimingSchema, request.body, 'body');
    state.settlement.configure({
      latePercent: body.latePercent,
      seed: body.seed ?? state.settlement.timing.seed,
    });
    return state.settlement.timing;
  });
}

/** The control in minor units of the payment's currency; a gross of the wrong sign is 422. */
function controlOf(payment: Payment, body: SettlementControlBody): SettlementControl {
  let grossMinor: number | undefined;
  if (body.grossAmount !== undefined) {
    try {
      grossMinor = toMinorUnits(body.grossAmount, payment.currency);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      throw unprocessable([
        { loc: ['body', 'grossAmount'], msg: error.message, type: 'value_error.amount' },
      ]);
    }
    if (body.kind === 'refund' ? grossMinor >= 0 : grossMinor <= 0) {
      throw unprocessable([
        {
          loc: ['body', 'grossAmount'],
          msg: `a ${body.kind} line's gross is ${body.kind === 'refund' ? 'negative' : 'positive'}`,
          type: 'value_error.amount_sign',
        },
      ]);
    }
  }
  return {
    grossMinor,
    twice: body.twice,
    never: body.never,
    lateDays: body.lateDays,
  };
}
