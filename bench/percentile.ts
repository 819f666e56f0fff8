/** The nearest-rank percentile every bench reports: the smallest value with at least `fraction` of the values at or below it (0 when there are none). */
export function nearestRank(sorted: ArrayLike<number>, fraction: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[index] ?? 0;
}
