/**
 * Every record a paged listing of the sandbox's control API holds (GET /sandbox/payments,
 * GET /sandbox/webhook-deliveries): it follows `nextCursor` until it is null. A page may be
 * short, even empty, before the end (docs/sandbox.md, "A long run").
 */

/** The largest page the sandbox serves (MAX_PAGE_SIZE in src/sandbox/control/control.schemas.ts). */
const PAGE_SIZE = 5_000;

async function allPages<T>(
  sandboxUrl: string,
  path: '/sandbox/payments' | '/sandbox/webhook-deliveries',
  field: 'payments' | 'deliveries',
  query: Record<string, string>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const search = new URLSearchParams({
      ...query,
      limit: String(PAGE_SIZE),
      ...(cursor === null ? {} : { cursor }),
    });
    const response = await fetch(`${sandboxUrl}${path}?${search.toString()}`);
    if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
    const page = (await response.json()) as Record<string, unknown> & {
      nextCursor?: string | null;
    };
    const pageItems = page[field];
    if (!Array.isArray(pageItems)) throw new Error(`GET ${path}: no ${field} in the answer`);
    items.push(...(pageItems as T[]));
    cursor = page.nextCursor ?? null;
  } while (cursor !== null);
  return items;
}

/** Every payment the sandbox keeps (optionally of one organization), oldest first. */
export function allSandboxPayments<T>(
  sandboxUrl: string,
  filter: { organizationId?: string } = {},
): Promise<T[]> {
  return allPages<T>(sandboxUrl, '/sandbox/payments', 'payments', { ...filter });
}
