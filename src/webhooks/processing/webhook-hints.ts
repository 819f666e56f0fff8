/**
 * The few undocumented payload fields the processor uses, as hints only: Payflow's payment
 * id (to resolve a payment whose creation is in doubt, verified by GET paymentStatus) and a
 * terminal failure's terminal id and reason (passed on as optional data).
 */
export interface WebhookHints {
  readonly paymentId?: string;
  readonly terminalId?: string;
  readonly reason?: string;
}

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_TEXT = 500;

function text(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.replace(/\s+/g, ' ').trim();
  return trimmed === '' ? undefined : trimmed.slice(0, MAX_TEXT);
}

/** Reads the hints of a stored webhook body; anything unusable is left out. */
export function webhookHints(body: Buffer | string): WebhookHints {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.isBuffer(body) ? body.toString('utf8') : body);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const record = parsed as Record<string, unknown>;
  const paymentId = text(record.paymentId);
  const terminalId = text(record.terminalId);
  const reason = text(record.reason);
  return {
    ...(paymentId !== undefined && ID_PATTERN.test(paymentId) ? { paymentId } : {}),
    ...(terminalId !== undefined ? { terminalId } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
}
