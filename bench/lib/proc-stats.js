// @ts-check
/**
 * CPU time and peak memory of another process, read from Linux's /proc. Reading them from
 * outside keeps the benchmark's own work out of the figures.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (`getconf CLK_TCK`, 100 nearly everywhere). */
const TICKS_PER_SECOND = readClockTicks();

function readClockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/**
 * User + system CPU time the process has used so far, all threads included, in microseconds.
 * @param {number} pid
 */
export function cpuTimeUs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  // What follows starts at field 3 (state); utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1_000_000) / TICKS_PER_SECOND;
}

/**
 * The process's peak resident set size so far (`VmHWM`), in bytes.
 * @param {number} pid
 */
export function peakRssBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  if (match === null) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}
