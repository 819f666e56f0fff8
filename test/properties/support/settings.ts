/**
 * How many generated cases a property test runs, and from which seed. CI runs the full
 * 10,000; a local run takes 1,000 unless PROPERTY_RUNS says otherwise. The seed is fixed so
 * that a failure is reproduced by running the file again; PROPERTY_SEED explores another
 * part of the input space (a failure message names the seed it ran with).
 */
export interface PropertySettings {
  readonly runs: number;
  readonly seed: number;
}

export const CI_RUNS = 10_000;
export const LOCAL_RUNS = 1_000;
export const DEFAULT_SEED = 20_261_121;

export function propertySettings(
  env: Readonly<Record<string, string | undefined>> = process.env,
): PropertySettings {
  return {
    runs: positiveInteger(env, 'PROPERTY_RUNS') ?? (env.CI === 'true' ? CI_RUNS : LOCAL_RUNS),
    seed: integer(env, 'PROPERTY_SEED') ?? DEFAULT_SEED,
  };
}

function integer(env: Readonly<Record<string, string | undefined>>, name: string) {
  const text = env[name];
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, not "${text}"`);
  return value;
}

function positiveInteger(env: Readonly<Record<string, string | undefined>>, name: string) {
  const value = integer(env, name);
  if (value !== undefined && value < 1) throw new Error(`${name} must be at least 1`);
  return value;
}
