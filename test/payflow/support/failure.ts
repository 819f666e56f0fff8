/** The PayflowError a call fails with; fails the test when it succeeds or throws anything else. */
import { PayflowError } from '../../../src/payflow/payflow.errors.js';

export async function failure(promise: Promise<unknown>): Promise<PayflowError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PayflowError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}
