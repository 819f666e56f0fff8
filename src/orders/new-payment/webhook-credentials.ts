/**
 * Per-payment webhook credentials: an unguessable URL token (bound to the payment row
 * before Payflow is called) and an `api_key` that Payflow sends back with every webhook.
 * The key is sent to Payflow once and stored only as its SHA-256.
 */
import { hash } from 'node:crypto';
import { RandomPool } from './random-pool.js';
import { WEBHOOK_KINDS, type WebhookKind } from '../../payflow/wire/payflow.schemas.js';

/** One system call per ~146 payments instead of one each (CPU per order, issue 21). */
const RANDOM = new RandomPool();

export interface WebhookCredentials {
  /** 24 random bytes, base64url: the path segment of the payment's webhook URLs. */
  readonly token: string;
  /** 32 random bytes, base64url: never stored, never logged. */
  readonly apiKey: string;
  /** SHA-256 of `apiKey` (UTF-8), the only form that is stored. */
  readonly apiKeyHash: Buffer;
}

export function newWebhookCredentials(): WebhookCredentials {
  // One draw for both.
  const random = RANDOM.take(56);
  const token = random.subarray(0, 24).toString('base64url');
  const apiKey = random.subarray(24).toString('base64url');
  return { token, apiKey, apiKeyHash: hashApiKey(apiKey) };
}

export function hashApiKey(apiKey: string): Buffer {
  return hash('sha256', Buffer.from(apiKey, 'utf8'), 'buffer');
}

/** `${base}/webhooks/payflow/${token}/${kind}` */
export function webhookUrl(baseUrl: string, token: string, kind: WebhookKind): string {
  return `${baseUrl.replace(/\/+$/, '')}/webhooks/payflow/${encodeURIComponent(token)}/${kind}`;
}

/** The create-payment `callback` object for these credentials. */
export function webhookCallback(
  baseUrl: string,
  credentials: Pick<WebhookCredentials, 'token' | 'apiKey'>,
): {
  url: string;
  status_update_url: string;
  terminal_failure_url: string;
  api_key: string;
} {
  const [paymentUpdate, statusUpdate, terminalFailure] = WEBHOOK_KINDS;
  return {
    url: webhookUrl(baseUrl, credentials.token, paymentUpdate),
    status_update_url: webhookUrl(baseUrl, credentials.token, statusUpdate),
    terminal_failure_url: webhookUrl(baseUrl, credentials.token, terminalFailure),
    api_key: credentials.apiKey,
  };
}
