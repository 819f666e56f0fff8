import { describe, expect, it } from '@jest/globals';
import { PendingOutcomes } from './pending-outcomes.js';

const finish = async (): Promise<void> => {};

describe('PendingOutcomes', () => {
  it('tells the guard decision what it remembers of an event, and nothing of others', () => {
    const pending = new PendingOutcomes();
    pending.remember('e1', { kind: 'outcome', finish });
    pending.remember('e2', { kind: 'no_effect' });
    expect(pending.kindOf('e1')).toBe('outcome');
    expect(pending.kindOf('e2')).toBe('no_effect');
    expect(pending.kindOf('e3')).toBeNull();
  });

  it('resumes only a remembered outcome', () => {
    const pending = new PendingOutcomes();
    pending.remember('e1', { kind: 'outcome', finish });
    pending.remember('e2', { kind: 'no_effect' });
    expect(pending.outcome('e1')).toBe(finish);
    expect(() => pending.outcome('e2')).toThrow('no outcome to resume');
    expect(() => pending.outcome('e3')).toThrow('no outcome to resume');
  });

  it('forgets an event once its attempt is recorded or superseded', () => {
    const pending = new PendingOutcomes();
    pending.remember('e1', { kind: 'outcome', finish });
    pending.forget('e1');
    expect(pending.kindOf('e1')).toBeNull();
  });

  it('keeps the newest entries within its bound, a remembered one counting as new again', () => {
    const pending = new PendingOutcomes(2);
    pending.remember('e1', { kind: 'no_effect' });
    pending.remember('e2', { kind: 'no_effect' });
    pending.remember('e1', { kind: 'outcome', finish });
    pending.remember('e3', { kind: 'no_effect' });
    expect(pending.kindOf('e2')).toBeNull();
    expect(pending.kindOf('e1')).toBe('outcome');
    expect(pending.kindOf('e3')).toBe('no_effect');
  });
});
