import { describe, expect, it } from '@jest/globals';
import { fromWirePaymentStatus } from '../../payflow/wire/payflow.mapping.js';
import { paymentStatusResponseSchema } from '../../payflow/wire/payflow.schemas.js';
import type { PaymentStatus } from '../../payflow/payflow.types.js';
import {
  holdingsOf,
  holdsAnything,
  unexplainedEffects,
  type BridgeRecords,
  type PayflowHoldings,
} from './unexplained-effects.matching.js';

const ID = (n: number): string => n.toString(16).padStart(24, '0');

function records(overrides: Partial<BridgeRecords> = {}): BridgeRecords {
  return {
    installmentIds: new Set(),
    unboundInstallments: [],
    documentIds: new Set(),
    liveCommands: new Set(),
    ...overrides,
  };
}

function held(overrides: Partial<PayflowHoldings> = {}): PayflowHoldings {
  return {
    currency: 'NOK',
    installments: [
      { id: ID(1), date: '2026-12-01', grossMinor: 62_475n, status: 'SENT' },
      { id: ID(2), date: '2027-01-01', grossMinor: 62_475n, status: 'CREATED' },
      { id: ID(3), date: '2027-03-01', grossMinor: 12_500n, status: 'CREATED' },
    ],
    documents: [
      { id: ID(10), fileName: 'invoice.pdf' },
      { id: ID(11), fileName: 'invoice.pdf' },
    ],
    ...overrides,
  };
}

/** Ids of the bridge's own rows: the plan's two installments and the first document. */
const OWN = records({
  installmentIds: new Set([ID(1), ID(2)]),
  documentIds: new Set([ID(10)]),
});

describe('unexplainedEffects', () => {
  it('reports what Payflow holds that the bridge has no row for, with amount and date', () => {
    expect(unexplainedEffects(held(), OWN)).toEqual({
      unexplained: [
        {
          kind: 'installment',
          payflowId: ID(3),
          date: '2027-03-01',
          grossMinor: 12_500n,
          currency: 'NOK',
          status: 'CREATED',
        },
        { kind: 'document', payflowId: ID(11), fileName: 'invoice.pdf' },
      ],
      skipped: [],
    });
  });

  it('reports nothing when every effect has its row (removed ones are rows too)', () => {
    const all = records({
      installmentIds: new Set([ID(1), ID(2), ID(3)]),
      documentIds: new Set([ID(10), ID(11)]),
    });
    expect(unexplainedEffects(held(), all)).toEqual({ unexplained: [], skipped: [] });
  });

  it('counts a planned installment without its Payflow id as explaining one of its date and amount', () => {
    const unbound = records({
      installmentIds: new Set([ID(1)]),
      unboundInstallments: [{ date: '2027-01-01', grossMinor: 62_475n }],
      documentIds: new Set([ID(10), ID(11)]),
    });
    const twice = held({
      installments: [
        ...held().installments.slice(0, 2),
        { id: ID(4), date: '2027-01-01', grossMinor: 62_475n, status: 'CREATED' },
      ],
    });
    expect(unexplainedEffects(twice, unbound).unexplained).toEqual([
      expect.objectContaining({ kind: 'installment', payflowId: ID(4) }),
    ]);
    // Another amount is not explained by it.
    const other = records({
      ...unbound,
      unboundInstallments: [{ date: '2027-01-01', grossMinor: 1n }],
    });
    expect(unexplainedEffects(held(), other).unexplained.map((effect) => effect.payflowId)).toEqual(
      [ID(2), ID(3)],
    );
  });

  it.each(['order.installment_added', 'order.payment_requested'])(
    'does not check installments while a %s attempt is live (it may be about to record one)',
    (command) => {
      const live = records({ ...OWN, liveCommands: new Set([command]) });
      expect(unexplainedEffects(held(), live)).toEqual({
        unexplained: [{ kind: 'document', payflowId: ID(11), fileName: 'invoice.pdf' }],
        skipped: [{ kind: 'installment', why: `a live ${command} attempt` }],
      });
    },
  );

  it('does not check documents while an upload is live, nor when Payflow lists no files', () => {
    const live = records({ ...OWN, liveCommands: new Set(['order.document_attached']) });
    expect(unexplainedEffects(held(), live)).toMatchObject({
      unexplained: [{ kind: 'installment', payflowId: ID(3) }],
      skipped: [{ kind: 'document', why: 'a live order.document_attached attempt' }],
    });
    expect(unexplainedEffects(held({ documents: null }), OWN)).toMatchObject({
      unexplained: [{ kind: 'installment', payflowId: ID(3) }],
      skipped: [{ kind: 'document', why: 'Payflow listed no files' }],
    });
  });

  it('ignores live attempts of commands that create nothing', () => {
    const live = records({
      ...OWN,
      liveCommands: new Set([
        'order.installment_changed',
        'order.cancelled',
        'order.refund_requested',
      ]),
    });
    expect(unexplainedEffects(held(), live).skipped).toEqual([]);
    expect(unexplainedEffects(held(), live).unexplained).toHaveLength(2);
  });

  it('reports an id Payflow lists twice once', () => {
    const twice = held({
      documents: [
        { id: ID(12), fileName: null },
        { id: ID(12), fileName: null },
      ],
    });
    expect(unexplainedEffects(twice, OWN).unexplained).toEqual([
      expect.objectContaining({ kind: 'installment', payflowId: ID(3) }),
      { kind: 'document', payflowId: ID(12), fileName: null },
    ]);
  });
});

function paymentStatus(files: unknown): PaymentStatus {
  const body = {
    totalAmount: 1374.5,
    installments: [
      {
        id: ID(1),
        date: '2026-12-01',
        type: 'initial',
        grossAmount: 1249.5,
        status: 'SENT',
        numTried: 0,
        successfullyChargedAt: null,
        numFailed: 0,
        lastFailedAt: null,
      },
      {
        id: ID(3),
        date: '2027-03-01',
        type: 'scheduled',
        grossAmount: 125,
        status: 'CREATED',
        numTried: 0,
        successfullyChargedAt: null,
        numFailed: 0,
        lastFailedAt: null,
      },
    ],
    paymentId: ID(99),
    paymentNumber: 1042,
    paymentStatus: { paymentStatus: 'SENT' },
    merchantId: 'org-1',
    createdAt: '2026-11-01T09:00:00.000Z',
    dueDate: '2026-12-01',
    ...(files === undefined ? {} : { files }),
    currency: 'NOK',
  };
  return fromWirePaymentStatus(paymentStatusResponseSchema.parse(body), 'NOK');
}

describe('holdingsOf', () => {
  it('reads a paymentStatus answer in minor units (bigint) and keeps what files show', () => {
    const holdings = holdingsOf(paymentStatus([{ id: ID(10), fileName: 'a.pdf' }, { id: ID(11) }]));
    expect(holdings).toEqual({
      currency: 'NOK',
      installments: [
        { id: ID(1), date: '2026-12-01', grossMinor: 124_950n, status: 'SENT' },
        { id: ID(3), date: '2027-03-01', grossMinor: 12_500n, status: 'CREATED' },
      ],
      documents: [
        { id: ID(10), fileName: 'a.pdf' },
        { id: ID(11), fileName: null },
      ],
    });
    expect(holdsAnything(holdings)).toBe(true);
  });

  it('tells files not listed (absent or null) from an empty list', () => {
    expect(holdingsOf(paymentStatus(undefined)).documents).toBeNull();
    expect(holdingsOf(paymentStatus(null)).documents).toBeNull();
    expect(holdingsOf(paymentStatus([])).documents).toEqual([]);
    expect(holdsAnything({ currency: 'NOK', installments: [], documents: null })).toBe(false);
    expect(holdsAnything({ currency: 'NOK', installments: [], documents: [] })).toBe(false);
  });
});
