/**
 * How an event whose call is held for a late effect waits (protocol/attempt-protocol.ts,
 * `hold`): Payflow is read again with back-off while the window runs, and once more right
 * after it ends, when "not applied" is finally trusted. Pure, so that the schedule is
 * tested without a clock.
 */

/** The first reads come soon: most late effects land within seconds of the answer lost. */
export const LATE_EFFECT_MIN_READ_DELAY_MS = 1_000;
/** And never more than this apart, so that one that lands late is completed soon after. */
export const LATE_EFFECT_MAX_READ_DELAY_MS = 30_000;
/** The last read comes this long after the window ended (the ledger's clock is the judge). */
export const LATE_EFFECT_WINDOW_MARGIN_MS = 250;

/**
 * The delay before the next read of a held call: half the time since its latest request
 * left (so the reads back off as the effect becomes less likely), between the bounds
 * above, and not past the end of the window, after which one read decides.
 */
export function lateEffectReadDelayMs(sinceSentMs: number, remainingMs: number): number {
  const backoff = Math.min(
    LATE_EFFECT_MAX_READ_DELAY_MS,
    Math.max(LATE_EFFECT_MIN_READ_DELAY_MS, Math.round(sinceSentMs / 2)),
  );
  const toWindowEnd = Math.max(0, Math.ceil(remainingMs)) + LATE_EFFECT_WINDOW_MARGIN_MS;
  return Math.min(backoff, toWindowEnd);
}
