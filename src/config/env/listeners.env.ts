/** HTTP_*, TLS_*, MANAGEMENT_*: the public and the management listener. */
import { z } from 'zod';
import { duration, filePath, positiveInt } from '../env-values.js';

export const listenersEnv = z.object({
  HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HTTP_HOST: z.string().default('0.0.0.0'),
  TLS_CERT_FILE: z.string().min(1).optional(),
  TLS_KEY_FILE: z.string().min(1).optional(),
  /** The public listener's limits (webhooks only): headers and whole-request time-outs. */
  HTTP_HEADERS_TIMEOUT: duration.default(10_000),
  HTTP_REQUEST_TIMEOUT: duration.default(30_000),
  /** Connections one address may hold open at once on the public listener. */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: positiveInt.default(64),
  /** The private operations listener: /metrics, /health/live, /health/ready, /console. */
  MANAGEMENT_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  MANAGEMENT_HOST: z.string().min(1).default('0.0.0.0'),
  /** TLS on the management port (PEM certificate chain and key); set together or not at all. */
  MANAGEMENT_TLS_CERT_FILE: filePath.optional(),
  MANAGEMENT_TLS_KEY_FILE: filePath.optional(),
});
