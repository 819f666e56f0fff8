/**
 * One structured logger (pino) for the whole process. Secrets and personal data are
 * redacted by path wherever they may appear, so a careless log call cannot leak them.
 */
import { pino, type Logger } from 'pino';

export type AppLogger = Logger;

/** Paths censored in every log line (pino redact syntax). */
export const REDACTED_PATHS = [
  'password',
  'secret',
  'clientSecret',
  'client_secret',
  'accessToken',
  'access_token',
  'token',
  'apiKey',
  'api_key',
  'authorization',
  'email',
  'phone',
  'serviceAdvisorEmail',
  '*.password',
  '*.secret',
  '*.clientSecret',
  '*.client_secret',
  '*.accessToken',
  '*.access_token',
  '*.token',
  '*.apiKey',
  '*.api_key',
  '*.authorization',
  '*.email',
  '*.phone',
  '*.serviceAdvisorEmail',
  'headers.authorization',
  'headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
];

export function createLogger(options: { level?: string; name?: string } = {}): AppLogger {
  return pino({
    name: options.name ?? 'payflow-bridge',
    level: options.level ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  });
}

/** A logger that writes nothing, for tests and tools that print their own output. */
export function silentLogger(): AppLogger {
  return pino({ level: 'silent' });
}
