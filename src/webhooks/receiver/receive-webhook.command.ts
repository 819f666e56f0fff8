/**
 * A webhook request turned into a command: the parsed parts the handler needs, the raw
 * bytes to store, the headers with secrets redacted, and the dedupe key.
 */
import { createHash } from 'node:crypto';
import { WEBHOOK_KINDS, type WebhookKind } from '../../payflow/payflow.schemas.js';
import { WebhookRejection } from './receive-webhook.errors.js';

export interface ReceiveWebhookCommand {
  readonly token: string;
  readonly kind: WebhookKind;
  /** The api key offered (X-Api-Key, else Authorization: Bearer, else body `api_key`). */
  readonly apiKey: string | undefined;
  readonly rawBody: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  readonly dedupeKey: string;
}

export interface WebhookRequestParts {
  readonly token: string;
  readonly kind: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body as parsed by the JSON content-type parser. */
  readonly body: unknown;
  readonly rawBody: Buffer | undefined;
}

/** Header names whose values are never stored. */
const REDACTED_HEADERS = new Set([
  'x-api-key',
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
]);
export const REDACTED = '[redacted]';

/** Tokens are base64url (32 characters); anything else cannot be one of ours. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

export function isWebhookKind(kind: string): kind is WebhookKind {
  return (WEBHOOK_KINDS as readonly string[]).includes(kind);
}

export function isPlausibleToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

export function buildReceiveCommand(parts: WebhookRequestParts): ReceiveWebhookCommand {
  if (!isWebhookKind(parts.kind)) throw WebhookRejection.notFound();
  const body = parts.body;
  if (
    parts.rawBody === undefined ||
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body)
  ) {
    throw WebhookRejection.badRequest();
  }
  const deliveryId = firstHeader(parts.headers['x-payflow-delivery'])?.trim();
  return {
    token: parts.token,
    kind: parts.kind,
    apiKey: apiKeyOf(parts.headers, body as Record<string, unknown>),
    rawBody: parts.rawBody,
    headers: redactHeaders(parts.headers),
    dedupeKey: dedupeKey(parts.token, parts.kind, deliveryId, parts.rawBody),
  };
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function apiKeyOf(
  headers: WebhookRequestParts['headers'],
  body: Record<string, unknown>,
): string | undefined {
  const header = firstHeader(headers['x-api-key']);
  if (header !== undefined && header !== '') return header;
  const authorization = firstHeader(headers.authorization);
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1] !== undefined) return match[1];
  }
  const field = body.api_key;
  return typeof field === 'string' && field !== '' ? field : undefined;
}

export function redactHeaders(headers: WebhookRequestParts['headers']): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    result[lower] = REDACTED_HEADERS.has(lower)
      ? REDACTED
      : Array.isArray(value)
        ? value.join(', ')
        : value;
  }
  return result;
}

/**
 * `delivery:` + SHA-256(token, kind, X-Payflow-Delivery) when the header is present (the
 * same across Payflow's retries of one webhook), else `body:` + SHA-256(token, kind, raw
 * body). Hashed so the key has a fixed size and does not hold the token.
 */
export function dedupeKey(
  token: string,
  kind: WebhookKind,
  deliveryId: string | undefined,
  rawBody: Buffer,
): string {
  const hash = createHash('sha256').update(token).update('\0').update(kind).update('\0');
  if (deliveryId !== undefined && deliveryId !== '') {
    return `delivery:${hash.update(deliveryId, 'utf8').digest('hex')}`;
  }
  return `body:${hash.update(rawBody).digest('hex')}`;
}
