/**
 * Transitional re-export: the webhook credentials moved to src/orders/shared. Kept only for
 * bench/webhooks.bench.ts (outside this change); import from orders/shared instead, and
 * delete this file once nothing imports it.
 */
export {
  hashApiKey,
  newWebhookCredentials,
  webhookCallback,
  webhookUrl,
  type WebhookCredentials,
} from '../shared/webhook-credentials.js';
