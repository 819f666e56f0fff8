import { describe, expect, it } from '@jest/globals';
import {
  LATE_EFFECT_MAX_READ_DELAY_MS,
  LATE_EFFECT_MIN_READ_DELAY_MS,
  LATE_EFFECT_WINDOW_MARGIN_MS,
  lateEffectReadDelayMs,
} from './late-effect-wait.js';

describe('lateEffectReadDelayMs', () => {
  it('reads again soon after the request left, then backs off with the time since', () => {
    expect(lateEffectReadDelayMs(300, 170_000)).toBe(LATE_EFFECT_MIN_READ_DELAY_MS);
    expect(lateEffectReadDelayMs(8_000, 170_000)).toBe(4_000);
    expect(lateEffectReadDelayMs(40_000, 140_000)).toBe(20_000);
  });

  it('never waits longer than the bound between two reads', () => {
    expect(lateEffectReadDelayMs(150_000, 30_000 + 10_000)).toBe(LATE_EFFECT_MAX_READ_DELAY_MS);
  });

  it('reads once more just after the window ends, never later', () => {
    expect(lateEffectReadDelayMs(60_000, 2_000)).toBe(2_000 + LATE_EFFECT_WINDOW_MARGIN_MS);
    expect(lateEffectReadDelayMs(60_000, 0)).toBe(LATE_EFFECT_WINDOW_MARGIN_MS);
    expect(lateEffectReadDelayMs(60_000, -500)).toBe(LATE_EFFECT_WINDOW_MARGIN_MS);
  });

  it('waits whole milliseconds', () => {
    expect(Number.isInteger(lateEffectReadDelayMs(3_333, 1_234.4))).toBe(true);
  });
});
