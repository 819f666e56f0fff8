/** PAYFLOW_*: the Payflow API, its credentials and time-outs. */
import { z } from 'zod';
import { duration, filePath, httpsUnlessLoopback, positiveInt } from '../env-values.js';
import { ConfigError } from '../config-error.js';

/**
 * PAYFLOW_LATE_EFFECT_WINDOW's default, 3 minutes: six times the default request time-out,
 * and above the 60 s that gateways and load balancers commonly hold a request, plus the
 * time a server may still work on it after its gateway gave up (docs/assumptions.md,
 * "Late effects").
 */
export const DEFAULT_LATE_EFFECT_WINDOW_MS = 3 * 60_000;

export const payflowEnv = z.object({
  /** https, or http to a loopback host only (transport-security.ts; the sandbox). */
  PAYFLOW_BASE_URL: httpsUnlessLoopback,
  PAYFLOW_PARTNER_BASE_URL: httpsUnlessLoopback,
  PAYFLOW_TOKEN_URL: httpsUnlessLoopback.optional(),
  PAYFLOW_CLIENT_ID: z.string().min(1, { message: 'is required' }),
  PAYFLOW_CLIENT_SECRET: z.string().min(1, { message: 'is required' }),
  /**
   * Where PAYFLOW_CLIENT_SECRET was read from, when it came from a file: the client reads
   * it again when the token endpoint says invalid_client (a rotated secret).
   */
  PAYFLOW_CLIENT_SECRET_FILE: filePath.optional(),
  PAYFLOW_CONNECT_TIMEOUT: duration.default(5_000),
  PAYFLOW_REQUEST_TIMEOUT: duration.default(30_000),
  /**
   * How long after a request left Payflow may still apply it. A read of Payflow that shows a
   * call "not applied" is trusted only once this has passed since the call's send mark.
   * Unset: DEFAULT_LATE_EFFECT_WINDOW_MS, or twice PAYFLOW_REQUEST_TIMEOUT when that is
   * longer (loadConfig); set: at least twice PAYFLOW_REQUEST_TIMEOUT.
   */
  PAYFLOW_LATE_EFFECT_WINDOW: duration.optional(),
  /**
   * Connections to Payflow at once. Unset: MAX_IN_FLIGHT (loadConfig), since every event in
   * flight may be in a call; fewer made calls wait for a connection inside the process.
   */
  PAYFLOW_MAX_CONNECTIONS: positiveInt.optional(),
  /** How uploadDocument sends a document: JSON with base64 content, or multipart/form-data. */
  PAYFLOW_DOCUMENT_UPLOAD: z
    .enum(['json', 'multipart'], { message: 'must be json or multipart' })
    .default('json'),
});

/** The late-effect window: at least twice the request time-out (see the variable). */
export function lateEffectWindow(
  config: Pick<
    z.output<typeof payflowEnv>,
    'PAYFLOW_LATE_EFFECT_WINDOW' | 'PAYFLOW_REQUEST_TIMEOUT'
  >,
): number {
  const least = 2 * config.PAYFLOW_REQUEST_TIMEOUT;
  const window = config.PAYFLOW_LATE_EFFECT_WINDOW;
  if (window === undefined) return Math.max(DEFAULT_LATE_EFFECT_WINDOW_MS, least);
  if (window < least) {
    throw new ConfigError(
      'PAYFLOW_LATE_EFFECT_WINDOW',
      `must be at least twice PAYFLOW_REQUEST_TIMEOUT (${least} ms)`,
    );
  }
  return window;
}
