/**
 * The nights of the nightly pull. A "night" is the calendar day before the run, in
 * SETTLEMENT_TIMEZONE: the run at 02:30 Oslo time on the 22nd pulls the 21st.
 */
import { addDays, datesBetween, dateIn } from '../timing/calendar.js';

/** The night a run at `now` pulls: yesterday in `timeZone`. */
export function previousNight(now: Date, timeZone: string): string {
  return addDays(dateIn(now, timeZone), -1);
}

/**
 * The nights a run must start tracking: every night after the newest one already tracked,
 * up to `lastNight`. With none tracked yet (a new organization, a first run) only
 * `lastNight` itself: the bridge does not invent a history it never promised.
 */
export function nightsToTrack(newestTracked: string | null, lastNight: string): string[] {
  if (newestTracked === null) return [lastNight];
  return datesBetween(addDays(newestTracked, 1), lastNight);
}
