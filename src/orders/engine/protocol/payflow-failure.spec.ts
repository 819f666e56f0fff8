import { describe, expect, it } from '@jest/globals';
import {
  PayflowNetworkError,
  PayflowServerError,
  PayflowTimeoutError,
  PayflowValidationError,
  type PayflowReached,
} from '../../../payflow/payflow.errors.js';
import { classifyCallFailure } from './payflow-failure.js';

const init = (reached: PayflowReached, status?: number) => ({
  endpoint: 'createPayment' as const,
  method: 'POST',
  reached,
  status,
});

describe('classifyCallFailure', () => {
  it('knows what took no effect', () => {
    expect(classifyCallFailure(new PayflowValidationError(init('yes', 422), []), false).kind).toBe(
      'no_effect',
    );
    expect(
      classifyCallFailure(new PayflowNetworkError(init('no'), 'ECONNREFUSED'), false).kind,
    ).toBe('no_effect');
  });

  it('puts what may have taken effect in doubt, unless the call is repeatable', () => {
    const timeout = new PayflowTimeoutError(init('maybe'), 'headers');
    const server = new PayflowServerError(init('yes', 500));
    expect(classifyCallFailure(timeout, false).kind).toBe('in_doubt');
    expect(classifyCallFailure(server, false).kind).toBe('in_doubt');
    expect(classifyCallFailure(timeout, true).kind).toBe('no_effect');
    expect(classifyCallFailure(server, true).kind).toBe('no_effect');
  });

  it('takes a 503 at its word: the server did not handle the request', () => {
    expect(classifyCallFailure(new PayflowServerError(init('yes', 503)), false).kind).toBe(
      'no_effect',
    );
  });

  it('leaves anything else unknown', () => {
    expect(classifyCallFailure(new TypeError('bug'), false).kind).toBe('unknown');
  });
});
