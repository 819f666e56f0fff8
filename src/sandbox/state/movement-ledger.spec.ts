import { describe, expect, it } from '@jest/globals';
import { MovementLedger, type Movement } from './movement-ledger.js';

const movement = (organizationId: string, bookedAt: string, id: string): Movement => ({
  id,
  organizationId,
  paymentId: `p-${id}`,
  paymentNumber: 1,
  installmentId: null,
  internalRef: null,
  orderNumber: `SO-${id}`,
  type: 'payment',
  currency: 'NOK',
  grossMinor: 100,
  feeMinor: 2,
  bookedAt: Date.parse(bookedAt),
});

describe('MovementLedger', () => {
  it('selects one organization’s dates in booking order (stable), not the others', () => {
    const ledger = new MovementLedger(100);
    ledger.add(movement('org-1', '2026-03-02T10:00:00Z', 'b'));
    ledger.add(movement('org-1', '2026-03-01T12:00:00Z', 'a2'));
    ledger.add(movement('org-1', '2026-03-01T08:00:00Z', 'a1'));
    ledger.add(movement('org-1', '2026-03-01T12:00:00Z', 'a3'));
    ledger.add(movement('org-2', '2026-03-01T09:00:00Z', 'other'));
    ledger.add(movement('org-1', '2026-03-05T09:00:00Z', 'later'));
    const days = ledger.select('org-1', '2026-03-01', '2026-03-02');
    const rows = days.flatMap((day) =>
      day.movements.map((movement) => `${day.date} ${movement.id}`),
    );
    expect(rows).toEqual(['2026-03-01 a1', '2026-03-01 a2', '2026-03-01 a3', '2026-03-02 b']);
  });

  it('forgets the oldest booked dates past its bound, and the oldest rows of a last date', () => {
    const ledger = new MovementLedger(4);
    ledger.add(movement('org-2', '2026-03-01T09:00:00Z', 'x'));
    ledger.add(movement('org-1', '2026-03-02T09:00:00Z', 'y1'));
    ledger.add(movement('org-1', '2026-03-02T10:00:00Z', 'y2'));
    ledger.add(movement('org-1', '2026-03-03T10:00:00Z', 'z1'));
    expect(ledger.size).toBe(4);
    ledger.add(movement('org-1', '2026-03-03T11:00:00Z', 'z2'));
    expect(ledger.size).toBe(4);
    expect(ledger.select('org-2', '2026-01-01', '2026-12-31')).toEqual([]);
    ledger.add(movement('org-1', '2026-03-03T12:00:00Z', 'z3'));
    const ids = (from: string, to: string): string[] =>
      ledger.select('org-1', from, to).flatMap((day) => day.movements.map((m) => m.id));
    expect(ids('2026-01-01', '2026-12-31')).toEqual(['z1', 'z2', 'z3']);
    ledger.add(movement('org-1', '2026-03-03T13:00:00Z', 'z4'));
    ledger.add(movement('org-1', '2026-03-03T14:00:00Z', 'z5'));
    expect(ledger.size).toBeLessThanOrEqual(4);
    const left = ids('2026-03-03', '2026-03-03');
    expect(left[left.length - 1]).toBe('z5');
    expect(left).not.toContain('z1');
  });
});
