/** Masking of free text the operator's reads show (the console, `order show`, the CLI). */

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
const PHONE = /\+\d[\d\s().-]{6,}\d/g;
const SECRET_PARAM = /([?&](?:api_key|apikey|api-key|token|access_token|secret)=)[^&\s"']+/gi;
const BEARER = /(bearer\s+)[A-Za-z0-9._~+/=-]+/gi;

/**
 * Free text from the database (errors, links, reasons) as it may be shown: emails, phone
 * numbers and secrets in URLs or bearer headers are masked, whatever wrote the text.
 */
export function sanitizeText(text: string): string {
  return text
    .replace(SECRET_PARAM, '$1[redacted]')
    .replace(BEARER, '$1[redacted]')
    .replace(EMAIL, '[email]')
    .replace(PHONE, '[phone]');
}
