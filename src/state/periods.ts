/** Budget periods are UTC calendar days and months. Times are milliseconds since the epoch. */

const DAY_MS = 86_400_000;

/** Counters outlive their period by a day, so a late settlement still lands and yesterday stays readable. */
export const COUNTER_GRACE_MS = DAY_MS;

export interface Period {
  /** `YYYY-MM-DD` */
  readonly day: string;
  /** `YYYY-MM` */
  readonly month: string;
  /** The next UTC midnight: the day's cap resets then. */
  readonly dayEndsAt: number;
  /** The first instant of the next UTC month: the month's cap resets then. */
  readonly monthEndsAt: number;
}

export function nextUtcMidnight(now: number): number {
  return (Math.floor(now / DAY_MS) + 1) * DAY_MS;
}

export function nextUtcMonthStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Whole seconds from `now` until `when`, at least 1 (a Retry-After of 0 invites a hot loop). */
export function secondsUntil(when: number, now: number): number {
  return Math.max(1, Math.ceil((when - now) / 1000));
}

// Every budget operation asks for the period of `now`; the answer only changes at midnight.
let current: (Period & { readonly dayStartsAt: number }) | undefined;

export function periodOf(now: number): Period {
  if (current !== undefined && now >= current.dayStartsAt && now < current.dayEndsAt) return current;
  const dayStartsAt = Math.floor(now / DAY_MS) * DAY_MS;
  const iso = new Date(dayStartsAt).toISOString();
  current = {
    day: iso.slice(0, 10),
    month: iso.slice(0, 7),
    dayStartsAt,
    dayEndsAt: dayStartsAt + DAY_MS,
    monthEndsAt: nextUtcMonthStart(now),
  };
  return current;
}
