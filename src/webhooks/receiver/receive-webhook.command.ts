/**
 * A webhook request turned into a command: the parsed parts the handler needs, the bytes
 * to store (the body as received, with the api key redacted wherever Payflow put it), the
 * headers with secrets redacted, and the dedupe key.
 */
import { createHash } from 'node:crypto';
import { WEBHOOK_KINDS, type WebhookKind } from '../../payflow/wire/payflow.schemas.js';
import { WebhookRejection } from './receive-webhook.errors.js';

export interface ReceiveWebhookCommand {
  readonly token: string;
  readonly kind: WebhookKind;
  /** The api key offered (X-Api-Key, else Authorization: Bearer, else body `api_key`). */
  readonly apiKey: string | undefined;
  /** The body to store: as received, but never with an api key in it (`redactBody`). */
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
  const apiKey = apiKeyOf(parts.headers, body as Record<string, unknown>);
  const stored = redactBody(parts.rawBody, apiKey);
  return {
    token: parts.token,
    kind: parts.kind,
    apiKey,
    rawBody: stored,
    headers: redactHeaders(parts.headers, apiKey),
    // Of the stored body: the same webhook sent again is the same row, whatever its key.
    dedupeKey: dedupeKey(parts.token, parts.kind, deliveryId, stored),
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

/**
 * The headers to store: the ones that carry credentials redacted by name, and any other
 * whose value holds the offered api key.
 */
export function redactHeaders(
  headers: WebhookRequestParts['headers'],
  apiKey?: string,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : value;
    result[lower] =
      REDACTED_HEADERS.has(lower) || (isRedactableKey(apiKey) && text.includes(apiKey))
        ? REDACTED
        : text;
  }
  return result;
}

/** Body fields that hold an api key, at any depth (Payflow's own is the top-level `api_key`). */
const API_KEY_FIELD = /^api[_-]?key$/i;

/** Keys this short are not ours (ours are 43 characters): never searched for in text. */
const MIN_REDACTABLE_KEY = 16;

function isRedactableKey(apiKey: string | undefined): apiKey is string {
  return apiKey !== undefined && apiKey.length >= MIN_REDACTABLE_KEY;
}

/**
 * The body as it may be stored: no api key in it, and still valid JSON.
 *
 * Every occurrence of the offered key is replaced in the bytes by `[redacted]`, and so is
 * every string value of a field named like an api key (`api_key`, `apiKey`, `api-key`, at
 * any depth, a key written with JSON escapes too): inside JSON strings, so the JSON stays
 * valid and every other byte stays as received. Only when such a field holds something
 * else (a number, an object) is the body parsed, the field set to `"[redacted]"` and the
 * JSON written again (compact); a body nested too deeply for that is not kept at all. A
 * body that holds no key is returned as it is.
 */
export function redactBody(rawBody: Buffer, apiKey: string | undefined): Buffer {
  let body = rawBody;
  if (isRedactableKey(apiKey) && rawBody.includes(apiKey)) {
    body = Buffer.from(rawBody.toString('utf8').split(apiKey).join(REDACTED), 'utf8');
  }
  // String values of fields named like a key, in the text (every other byte kept).
  const text = body.toString('utf8');
  const replaced = text.replace(
    KEY_FIELD_IN_TEXT,
    (_match, field: string) => `${field}"${REDACTED}"`,
  );
  if (replaced !== text) body = Buffer.from(replaced, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(replaced);
  } catch {
    return body; // Only JSON objects are accepted; nothing else reaches storage.
  }
  if (!redactKeyFields(parsed)) return body;
  try {
    return Buffer.from(JSON.stringify(parsed), 'utf8');
  } catch {
    // Nested too deep for JSON.stringify: the body is not kept rather than kept with a key.
    return Buffer.from(
      JSON.stringify({ bodyNotStored: 'an api key field nested too deeply to redact' }),
      'utf8',
    );
  }
}

/** A JSON string value of a field named like an api key, as written in the text. */
const KEY_FIELD_IN_TEXT = /("api[_-]?key"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;

/**
 * Sets every field named like an api key that holds something to `"[redacted]"`, in place
 * (`value` is this module's own parse); true when one changed. Iterative: a body nested
 * thousands deep is valid JSON and must not overflow the stack.
 */
function redactKeyFields(value: unknown): boolean {
  let changed = false;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      pending.push(...(current as unknown[]));
      continue;
    }
    const record = current as Record<string, unknown>;
    for (const [name, entry] of Object.entries(record)) {
      if (!API_KEY_FIELD.test(name)) {
        pending.push(entry);
        continue;
      }
      if (entry === null || entry === '' || entry === REDACTED) continue;
      record[name] = REDACTED;
      changed = true;
    }
  }
  return changed;
}

/**
 * `delivery:` + SHA-256(token, kind, X-Payflow-Delivery) when the header is present (the
 * same across Payflow's retries of one webhook), else `body:` + SHA-256(token, kind, stored
 * body: the api key already redacted, so that no hash of it is kept either; one payment has
 * one key, so a retry still has the same body). Hashed so the key has a fixed size and does
 * not hold the token.
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
