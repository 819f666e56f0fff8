/**
 * A process's bound on its own heap, for the worker (HEAP_GROWTH_PERCENT) and the sandbox
 * (SANDBOX_HEAP_GROWTH_PERCENT). Node sizes V8's limit from the host's memory (4 GiB on a
 * 24 GiB host) and V8 then lets the old generation grow to up to 4x what survived the last
 * full collection. --max-old-space-size cannot be changed once Node runs (measured), but
 * the growth factor can, and V8 reads it at every collection: heap ~ live x (1 + percent).
 */
import { setFlagsFromString } from 'node:v8';

/** Sets V8's heap growth factor to `percent`; 0 leaves V8's own. */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
