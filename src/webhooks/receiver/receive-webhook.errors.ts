/**
 * The receiver's refusals: each carries its HTTP status and the small public body
 * `{ code, message }` the sender sees (never a stack, never internal detail).
 */
import type { ReceiveOutcome } from './receiver.metrics.js';

export type RejectionCode =
  | 'unauthorized'
  | 'bad_request'
  | 'not_found'
  | 'payload_too_large'
  | 'rate_limited'
  | 'unavailable'
  | 'internal_error';

export class WebhookRejection extends Error {
  constructor(
    readonly status: number,
    readonly code: RejectionCode,
    message: string,
    readonly outcome: ReceiveOutcome,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'WebhookRejection';
  }

  get body(): { code: RejectionCode; message: string } {
    return { code: this.code, message: this.message };
  }

  static unauthorized(): WebhookRejection {
    return new WebhookRejection(
      401,
      'unauthorized',
      'unknown webhook address or wrong api key',
      'unauthorized',
    );
  }

  static badRequest(message = 'the body must be a JSON object'): WebhookRejection {
    return new WebhookRejection(400, 'bad_request', message, 'rejected');
  }

  /**
   * Also the public listener's answer to every path and method it does not serve, so that
   * it says nothing of what runs behind it.
   */
  static notFound(): WebhookRejection {
    return new WebhookRejection(404, 'not_found', 'not found', 'rejected');
  }

  static payloadTooLarge(): WebhookRejection {
    return new WebhookRejection(413, 'payload_too_large', 'the body is too large', 'rejected');
  }

  static rateLimited(retryAfterSeconds: number): WebhookRejection {
    return new WebhookRejection(
      429,
      'rate_limited',
      'too many webhooks for this payment; retry later',
      'rate_limited',
      { 'retry-after': String(retryAfterSeconds) },
    );
  }

  static unavailable(): WebhookRejection {
    return new WebhookRejection(
      503,
      'unavailable',
      'the webhook could not be stored; retry later',
      'failed',
      { 'retry-after': '5' },
    );
  }

  static internal(): WebhookRejection {
    return new WebhookRejection(500, 'internal_error', 'internal error', 'failed');
  }

  /** The public answer for an HTTP status that fastify or Nest produced on their own. */
  static forStatus(status: number): WebhookRejection {
    if (status === 413) return WebhookRejection.payloadTooLarge();
    if (status === 404 || status === 405) return WebhookRejection.notFound();
    if (status === 401) return WebhookRejection.unauthorized();
    if (status === 429) return WebhookRejection.rateLimited(1);
    if (status >= 400 && status < 500) return WebhookRejection.badRequest('malformed request');
    return WebhookRejection.internal();
  }
}
