/**
 * Polls `condition` every 200 ms until it holds; throws, naming `what`, after `timeoutMs`.
 * For tests that watch worker processes, Kafka and Postgres from outside.
 */
import { sleep } from '../../src/timing/sleep.js';

export async function until(
  condition: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await sleep(200);
  }
}
