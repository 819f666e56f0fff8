import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { capturingLogger } from '../../../test/support/capturing-logger.js';
import type { Sql } from '../../database/database.js';
import { fromWirePaymentStatus } from '../../payflow/wire/payflow.mapping.js';
import { paymentStatusResponseSchema } from '../../payflow/wire/payflow.schemas.js';
import type { PaymentStatus } from '../../payflow/payflow.types.js';
import {
  UNEXPLAINED_EFFECTS_METRIC,
  unexplainedEffectsMetrics,
} from './unexplained-effects.metrics.js';
import { UnexplainedEffects } from './unexplained-effects.service.js';

const PAYMENT = { id: '6b1c0d2e-0000-4000-8000-000000000001', orderId: 'SO-1' };

function status(installmentIds: readonly string[]): PaymentStatus {
  const body = {
    totalAmount: 100,
    installments: installmentIds.map((id) => ({
      id,
      date: '2027-03-01',
      type: 'scheduled',
      grossAmount: 50,
      status: 'CREATED',
      numTried: 0,
      successfullyChargedAt: null,
      numFailed: 0,
      lastFailedAt: null,
    })),
    paymentId: 'pf-1',
    paymentNumber: 1,
    paymentStatus: { paymentStatus: 'SENT' },
    merchantId: 'org-1',
    createdAt: '2026-11-01T09:00:00.000Z',
    dueDate: '2026-12-01',
    files: [],
    currency: 'NOK',
  };
  return fromWirePaymentStatus(paymentStatusResponseSchema.parse(body), 'NOK');
}

/** A database that knows installment `i-1` and answers the record statement like Postgres. */
function fakeSql(failWith?: Error): { sql: Sql; statements: string[] } {
  const statements: string[] = [];
  const recorded = new Set<string>();
  const sql: Sql = {
    query: <R extends object>(text: string, params: readonly unknown[] = []) => {
      statements.push(text);
      if (failWith !== undefined) return Promise.reject(failWith);
      if (text.includes('UNION ALL')) {
        const rows = [
          {
            what: 'installment',
            paymentId: PAYMENT.id,
            orderId: null,
            ref: 'i-1',
            removed: false,
            date: '2026-12-01',
            gross: '5000',
          },
        ];
        return Promise.resolve(rows as unknown as R[]);
      }
      const ids = params[3] as string[];
      const rows = ids.map((payflowId, index) => {
        const firstSeen = !recorded.has(payflowId);
        recorded.add(payflowId);
        return {
          id: String(index + 1),
          paymentId: PAYMENT.id,
          kind: 'installment',
          payflowId,
          firstSeen,
        };
      });
      return Promise.resolve(rows as unknown as R[]);
    },
    execute: () => Promise.reject(new Error('not expected')),
  };
  return { sql, statements };
}

async function counted(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric(UNEXPLAINED_EFFECTS_METRIC)?.get();
  return Object.fromEntries(
    (metric?.values ?? []).map((value) => [
      `${value.labels.kind}/${value.labels.source}`,
      value.value,
    ]),
  );
}

describe('UnexplainedEffects', () => {
  it('records an unknown installment and reports it once: one line, one count', async () => {
    const { sql, statements } = fakeSql();
    const logs = capturingLogger();
    const registry = new Registry();
    const effects = UnexplainedEffects.create(sql, logs.logger, registry);

    const first = await effects.check(PAYMENT, status(['i-1', 'i-2']), 'webhook', 'trace-1');
    expect(first).toEqual([expect.objectContaining({ payflowId: 'i-2', firstSeen: true })]);
    await effects.check(PAYMENT, status(['i-1', 'i-2']), 'reconcile');

    expect(statements).toHaveLength(4); // a read and a record per check
    const warnings = logs.lines.filter((line) => line.level === 40);
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: 'effect at Payflow that no event of the order explains',
        orderId: 'SO-1',
        paymentId: PAYMENT.id,
        payflowPaymentId: 'pf-1',
        kind: 'installment',
        payflowId: 'i-2',
        source: 'webhook',
        traceId: 'trace-1',
      }),
    ]);
    expect(await counted(registry)).toMatchObject({
      'installment/webhook': 1,
      'installment/reconcile': 0,
      'document/probe': 0,
    });
  });

  it('costs one read and no write when everything is explained, none when nothing is held', async () => {
    const { sql, statements } = fakeSql();
    const effects = UnexplainedEffects.create(sql);
    await expect(effects.check(PAYMENT, status(['i-1']), 'webhook')).resolves.toEqual([]);
    expect(statements).toHaveLength(1);
    await expect(effects.check(PAYMENT, status([]), 'webhook')).resolves.toEqual([]);
    expect(statements).toHaveLength(1);
  });

  it('never fails its caller: a failed check is one warning, and the next read checks again', async () => {
    const { sql } = fakeSql(new Error('connection terminated'));
    const logs = capturingLogger();
    const effects = UnexplainedEffects.create(sql, logs.logger);
    await expect(effects.check(PAYMENT, status(['i-2']), 'probe')).resolves.toEqual([]);
    expect(logs.lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'unexplained effects: check failed; the next read of these payments checks again',
        payments: 1,
        paymentIds: [PAYMENT.id],
        source: 'probe',
      }),
    ]);
  });

  it('shares one counter among the parts that build the check', () => {
    const registry = new Registry();
    const webhook = unexplainedEffectsMetrics(registry);
    const probe = unexplainedEffectsMetrics(registry);
    webhook.firstSeen('document', 'webhook');
    probe.firstSeen('document', 'webhook');
    expect(registry.getMetricsAsArray()).toHaveLength(1);
  });
});
