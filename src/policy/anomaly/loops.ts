import type { ToolCallRecord } from './history.js';
import { round2, type LoopFinding } from './finding.js';

/** A loop is reported once it has come round this many times. */
export const MIN_REPEATS = 3;
/** Longest cycle `landmark_cycle` looks for. */
const MAX_CYCLE = 8;
/** `tool_diversity_collapse`: the recent window, and the varied stretch before it. */
const WINDOW = 10;
const MIN_VARIED_TOOLS = 4;

const sameResult = (a: ToolCallRecord, b: ToolCallRecord): boolean => a.result === null || b.result === null || a.result === b.result;

/**
 * Length of the longest tail of `calls` that repeats with period `k`, results included: every
 * call in it equals, with the same result, the call `k` places earlier.
 */
function periodicTail(calls: readonly ToolCallRecord[], k: number): number {
  let i = calls.length - 1;
  while (i - k >= 0 && calls[i]!.key === calls[i - k]!.key && sameResult(calls[i]!, calls[i - k]!)) i--;
  return calls.length - 1 - i + Math.min(k, calls.length);
}

function toolsOf(calls: readonly ToolCallRecord[]): string[] {
  return [...new Set(calls.map((c) => c.tool))];
}

function keysOf(calls: readonly ToolCallRecord[]): string[] {
  return [...new Set(calls.map((c) => c.key))];
}

function consecutiveRepeat(calls: readonly ToolCallRecord[]): LoopFinding | null {
  const last = calls.at(-1);
  if (last === undefined) return null;
  let start = calls.length - 1;
  while (start > 0 && calls[start - 1]!.key === last.key) start--;
  const run = calls.slice(start);
  if (run.length < MIN_REPEATS) return null;
  const results = new Set(run.map((c) => c.result));
  const errors = run.filter((c) => c.isError).length;
  // Every answer new (a poll watching a job advance) is progress, until it goes on far too long.
  const progressing = results.size === run.length;
  if (progressing && run.length < 2 * MIN_REPEATS) return null;
  const base = progressing ? 0.6 : results.size === 1 ? 0.85 : 0.75;
  const confidence = round2(base + 0.04 * (run.length - MIN_REPEATS) + (errors === run.length ? 0.08 : 0));
  const detail = errors === run.length && results.size === 1 ? ', same error each time' : results.size === 1 ? ', same result each time' : '';
  return {
    detector: 'consecutive_repeat',
    confidence,
    repeats: run.length,
    tools: [last.tool],
    summary: `${last.tool} called ${run.length} times in a row with the same arguments${detail}`,
    loopKeys: [last.key],
  };
}

/** `ping_pong_cycle` (period 2) and `landmark_cycle` (period 3 to MAX_CYCLE), results unchanged throughout. */
function cycle(calls: readonly ToolCallRecord[]): LoopFinding | null {
  for (let k = 2; k <= MAX_CYCLE && (MIN_REPEATS - 1) * k + 1 <= calls.length; k++) {
    const tail = calls.slice(calls.length - periodicTail(calls, k));
    const passes = Math.floor((tail.length - 1) / k) + 1;
    if (passes < MIN_REPEATS) continue;
    const period = tail.slice(0, k);
    // A period made of a shorter one (A A, A B A B) belongs to the shorter detector.
    if (keysOf(period).length < k) continue;
    const tools = toolsOf(period);
    const confidence = round2(0.82 + 0.04 * (passes - MIN_REPEATS));
    if (k === 2) {
      return {
        detector: 'ping_pong_cycle',
        confidence,
        repeats: passes,
        tools,
        summary: `${period[0]!.tool} and ${period[1]!.tool} alternating ${passes} times with unchanged results`,
        loopKeys: keysOf(period),
      };
    }
    return {
      detector: 'landmark_cycle',
      confidence,
      repeats: passes,
      tools,
      summary: `a cycle of ${k} calls (${period.map((c) => c.tool).join(' → ')}) returning to ${period[0]!.tool} ${passes} times with unchanged results`,
      loopKeys: keysOf(period),
    };
  }
  return null;
}

/**
 * After a varied start the recent window uses one or two tools, and half or more of its calls
 * are repeats, or nearly all failed: the agent narrowed down without getting anywhere.
 */
function diversityCollapse(calls: readonly ToolCallRecord[]): LoopFinding | null {
  if (calls.length < 2 * WINDOW) return null;
  const window = calls.slice(-WINDOW);
  const tools = toolsOf(window);
  if (tools.length > 2) return null;
  const before = toolsOf(calls.slice(0, -WINDOW));
  if (before.length < MIN_VARIED_TOOLS) return null;
  const distinctCalls = keysOf(window).length;
  const errors = window.filter((c) => c.isError).length;
  const stalled = distinctCalls <= WINDOW / 2 || errors >= WINDOW - 1;
  if (!stalled) return null;
  const confidence = round2(0.7 + 0.2 * (1 - distinctCalls / WINDOW) + (errors >= WINDOW - 1 ? 0.08 : 0));
  return {
    detector: 'tool_diversity_collapse',
    confidence,
    repeats: WINDOW - distinctCalls,
    tools,
    summary: `the last ${WINDOW} calls use only ${tools.join(' and ')} (${distinctCalls} distinct, ${errors} failed) after ${before.length} different tools earlier`,
    loopKeys: keysOf(window),
  };
}

/**
 * The loop detectors over the ordered tool calls. Each looks at the tail of the history, so a
 * loop the agent has left stops being reported. The fuzzy `tool_diversity_collapse` is only
 * consulted when no exact loop explains the tail.
 */
export function detectLoops(calls: readonly ToolCallRecord[]): LoopFinding[] {
  const exact = [consecutiveRepeat(calls), cycle(calls)].filter((f): f is LoopFinding => f !== null);
  if (exact.length > 0) return exact;
  const fuzzy = diversityCollapse(calls);
  return fuzzy === null ? [] : [fuzzy];
}
