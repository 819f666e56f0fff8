import type { ValueTransformer } from 'typeorm';

/**
 * Postgres bigint columns come back from pg as text; amounts are integer minor units in the
 * program, so they are read as safe integers and refused otherwise (never silently rounded).
 */
export const minorUnitsTransformer: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | null): number | null => {
    if (value === null) return null;
    const parsed = Number(value);
    if (!Number.isSafeInteger(parsed)) {
      throw new RangeError(`bigint ${value} does not fit a safe integer`);
    }
    return parsed;
  },
};
