/**
 * The sandbox's virtual clock: real time plus an offset that only grows. It runs like a
 * wall clock (so a long-running sandbox behaves like the real service), and
 * `POST /sandbox/clock/advance` moves it forward so tests can reach retries, debits and
 * token expiry without waiting.
 */
export class VirtualClock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  /** Moves the clock forward so that now() is at least `time` (never backwards). */
  moveTo(time: number): void {
    const current = this.now();
    if (time > current) this.offsetMs += time - current;
  }

  get offsetMinutes(): number {
    return this.offsetMs / 60_000;
  }

  reset(): void {
    this.offsetMs = 0;
  }
}

export function isoOf(time: number): string {
  return new Date(time).toISOString();
}

/** The UTC calendar date (YYYY-MM-DD) of a time. */
export function utcDateOf(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/** Midnight UTC of a YYYY-MM-DD date, or undefined when it is not a real calendar date. */
export function startOfUtcDate(date: string): number | undefined {
  const time = Date.parse(`${date}T00:00:00.000Z`);
  if (Number.isNaN(time) || utcDateOf(time) !== date) return undefined;
  return time;
}
