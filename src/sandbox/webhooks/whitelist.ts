/**
 * The webhook whitelist's matching rule (docs/assumptions.md, webhooks): an IP address
 * matches only itself (IPv6 in its canonical form), a domain matches itself and its
 * subdomains label by label, so `example.com` allows `a.example.com` but neither
 * `badexample.com` nor, for an address, `0.0.1` the host `127.0.0.1`.
 */
import { isIP } from 'node:net';

/** Whether a webhook URL's host (as `URL.hostname` gives it) is on the whitelist. */
export function isWhitelisted(host: string, whitelist: readonly string[]): boolean {
  const target = normalize(host);
  const targetIsIp = isIP(target) !== 0;
  return whitelist.some((entry) => {
    const allowed = normalize(entry);
    if (allowed === '') return false;
    if (targetIsIp || isIP(allowed) !== 0) return target === allowed;
    return target === allowed || target.endsWith(`.${allowed}`);
  });
}

/** Lower case, no brackets around IPv6, no trailing dot; IPv6 in canonical form. */
function normalize(host: string): string {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (isIP(bare) !== 6) return bare;
  // The WHATWG URL parser writes an IPv6 address in its canonical (shortest) form.
  return new URL(`https://[${bare}]/`).hostname.replace(/^\[|\]$/g, '');
}
