import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection, in percent.
 * V8's own default lets it grow up to 4× while the process is busy: under 50 connections a proxy
 * with 35 MB live peaked at 225 MB RSS. At 50% it peaks about 60 MB lower, for a few percent more
 * CPU in collection (bench/README.md, "Memory").
 */
const HEAP_GROWING_PERCENT = 50;
/**
 * The size a semi-space of the young generation stops growing at, unless node was started with
 * `--max-semi-space-size` (the operator's own choice then stands). V8 grows them to 16 MB under
 * load (32 MB of young generation). At 8 MB the proxy peaked at 135–143 MB in the bench's 50- and
 * 200-connection scenarios, where it reached 149–155, for twice the scavenges, each shorter (what
 * survives one is mostly the requests in flight, whatever the space's size): 1.1–1.7 µs more pause
 * a request on the main thread. At 12 MB it peaked at 142–152 MB for 0.7 µs.
 */
const SEMI_SPACE_CAP_BYTES = 8 * 1024 * 1024;
/** V8's smallest semi-space: 1 MB on 64-bit. */
const MIN_SEMI_SPACE_BYTES = 1024 * 1024;
/** V8's own factor for growing the young generation. */
const V8_GROWTH_FACTOR = 2;

export interface HeapSizing {
  /** From now on the cap holds only while `wanted` answers true (never when the operator sized the young generation). */
  capWhile(wanted: () => boolean): void;
}

/**
 * Sizes V8's heap for the proxy: the old generation's growth past the live heap, and a cap on the
 * young generation's. V8 fixes the young generation's maximum when the process starts (only
 * `--max-semi-space-size` on node's command line sets it) but reads its growth factor each time
 * it grows it, at the end of a scavenge. So after each collection the factor is set to the one that
 * takes the young generation at most to the cap, 1 (no growth) once it is there; V8 still shrinks
 * it when the process is quiet, and it grows back to the cap. It is called before the proxy's modules load:
 * loading them and starting up would otherwise grow the young generation past the cap before the
 * first request, and it would stay there.
 *
 * The factor is the process's, not a thread's: the cap is meant while this thread's heap is the
 * only one that matters (`capWhile`: no other I/O threads, no inspection workers); while it is not,
 * the factor is V8's own, so another thread's young generation is never held small.
 */
export function sizeProxyHeap(): HeapSizing {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  const sizedByOperator = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((option) => option.includes('--max-semi-space-size'));
  if (sizedByOperator) return { capWhile() {} };
  let wanted = () => true;
  let factor = V8_GROWTH_FACTOR;
  const check = () => {
    const next = wanted() ? factorToward(SEMI_SPACE_CAP_BYTES, youngGenerationBytes() / 2) : V8_GROWTH_FACTOR;
    if (next === factor) return;
    factor = next;
    setFlagsFromString(`--semi-space-growth-factor=${next}`);
  };
  new PerformanceObserver(check).observe({ entryTypes: ['gc'] });
  check();
  return {
    capWhile(next) {
      wanted = next;
      check();
    },
  };
}

/**
 * The growth factor that takes a semi-space of `semiSpace` bytes to at most `cap` when V8 next
 * grows it (it multiplies the size, up to its own maximum): the largest that stays within the cap,
 * or 1 when none does.
 */
function factorToward(cap: number, semiSpace: number): number {
  return Math.max(1, Math.floor(cap / Math.max(semiSpace, MIN_SEMI_SPACE_BYTES)));
}

/** Both semi-spaces of this thread's young generation, as committed. */
function youngGenerationBytes(): number {
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') return space.space_size;
  return 0;
}
