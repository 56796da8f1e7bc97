/** The second whose text `secondText` holds, as milliseconds since the epoch. */
let second = Number.NaN;
/** `YYYY-MM-DDTHH:MM:SS.` of `second`. */
let secondText = '';

/**
 * `new Date(ms).toISOString()`, for the clock's current times: the text of the second is made once
 * and only the milliseconds are added per call (a trace record's time was half its build cost).
 * Times outside years 0–9999, which `toISOString` writes with six year digits, go to it.
 */
export function isoTime(ms: number): string {
  const whole = Math.trunc(ms);
  const start = whole - (((whole % 1000) + 1000) % 1000);
  if (start !== second) {
    const text = new Date(start).toISOString();
    if (text.length !== 24) return new Date(whole).toISOString();
    second = start;
    secondText = text.slice(0, 20);
  }
  const milli = whole - start;
  return `${secondText}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
