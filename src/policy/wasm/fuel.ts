/**
 * Fuel: what a rule may spend on one call (docs/wasm-rules.md, "Limits and failures"). A unit is
 * about one WebAssembly instruction: a metered module pays for its code as it runs (see meter.ts),
 * for bulk memory operations by their size, and the host charges for what its accessors do.
 */

/**
 * What metering adds to a module's exports: a setter and a getter of its fuel (an i32 global,
 * zero until the host fills it; functions, as a call into WebAssembly costs a fraction of reading
 * or writing an exported global from JavaScript); its start function, which the host calls once it
 * has given the module fuel; a pair that saves and restores the module's own mutable globals
 * (not the fuel), with which the host rewinds an arena rule after each call; and the line below
 * which the module's writes are watched: restoring the globals takes the fuel of the next call,
 * puts back the 16 bytes above the line as they were when it was drawn, and answers the fuel the
 * call left times two, plus 1 when memory below the line was written since the last restore. No
 * rule may export these names itself.
 */
export const METERING_EXPORTS = {
  setFuel: '__svc_set_fuel',
  getFuel: '__svc_get_fuel',
  start: '__svc_start',
  saveGlobals: '__svc_save_globals',
  restoreGlobals: '__svc_restore_globals',
  watchBelow: '__svc_watch_below',
} as const;

/**
 * Fuel per rule per call (and for starting a rule) when the configuration does not say. The
 * example rules spend 20,000–29,000 on an ordinary shell command and 30–2,500 more per character
 * of command (the most for a line of one-letter commands split for all three checks of
 * `assembly/index.ts`), so this fits 20,000 characters of that and 76,000 or more of ordinary
 * commands; an endless loop stopped at this budget has held its thread for about 25 ms on these
 * machines.
 */
export const DEFAULT_FUEL = 50_000_000;
export const MIN_FUEL = 10_000;
/** The fuel is an i32 and one payment takes at most 2^24 units, so it cannot wrap below zero. */
export const MAX_FUEL = 2 ** 30;

/**
 * The bytes just below the end of an arena rule's started state that the module itself puts back
 * on every restore (the allocator's header of the next block, which the first allocation of every
 * call writes): the host draws the watch line this far below that end.
 */
export const UNWATCHED_TAIL_BYTES = 16;

/** Bulk memory operations pay one unit per 2^4 bytes (and one). */
export const FUEL_PER_BYTES_SHIFT = 4;

/** What one host accessor call costs, plus one unit per 2^3 UTF-16 units it reads or writes. */
export const HOST_CALL_FUEL = 50;
export const HOST_FUEL_PER_CHARS_SHIFT = 3;

/** Whether a compiled module has the exports metering adds (and so runs no code before the host gives it fuel). */
export function hasMeteringExports(module: WebAssembly.Module): boolean {
  const names = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
  return names.has(METERING_EXPORTS.setFuel) && names.has(METERING_EXPORTS.getFuel);
}

/** A rule's fuel ran out: it was stopped. */
export class FuelExhaustedError extends Error {}
