/**
 * Bounded concurrency over a list, for work that calls another system per item (the
 * reconciliation poller's Payflow calls, the webhook inbox's groups): at most `limit` at once.
 */

/** Runs `work` over `items` with at most `limit` at once; results in input order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
