// @ts-check
/**
 * The micro-benchmarks: one hot function each, timed inside the benchmark process (no
 * servers run meanwhile). Later work adds entries here, e.g. DLP scan MB/s or WASM µs per
 * evaluation; each one's figures are reported as they come.
 *
 * `npm run bench -- micro` runs them all, `npm run bench -- <name>` one of them. Entries
 * import what they measure from dist/ inside `run()`, so the registry loads without a build.
 */
import { anomalyAccuracyBenchmark } from './anomaly-accuracy.js';
import { anomalyCostBenchmark } from './anomaly-cost.js';
import { dlpAccuracyBenchmark } from './dlp-accuracy.js';
import { dlpScanBenchmark } from './dlp-scan.js';
import { harnessInspectBenchmark } from './harness-inspect.js';
import { inspectBenchmark } from './inspect.js';
import { loopDetectionBenchmark } from './loop-detection.js';
import { sseFramerBenchmark } from './sse-framer.js';
import { streamRedactorBenchmark } from './stream-redactor.js';
import { toolPoisoningBenchmark } from './tool-poisoning.js';
import { traceIdBenchmark } from './trace-id.js';
import { traceJournalBenchmark } from './trace-journal.js';
import { decideOverheadBenchmark } from './decide-overhead.js';
import { wasmRulesBenchmark } from './wasm-rules.js';
import { interferenceBenchmark } from './interference.js';
import { mcpLatencyBenchmark } from './mcp-latency.js';
import { injectionBenchmark } from '../detection/injection.js';

/**
 * @typedef {object} MicroBenchmark
 * @property {string} name
 * @property {string} description
 * @property {() => Promise<Record<string, number | string>>} run  resolves with named figures
 */

/** @type {MicroBenchmark[]} */
export const MICRO_BENCHMARKS = [
  sseFramerBenchmark,
  streamRedactorBenchmark,
  traceIdBenchmark,
  traceJournalBenchmark,
  inspectBenchmark,
  harnessInspectBenchmark,
  dlpScanBenchmark,
  dlpAccuracyBenchmark,
  anomalyAccuracyBenchmark,
  anomalyCostBenchmark,
  loopDetectionBenchmark,
  toolPoisoningBenchmark,
  injectionBenchmark,
  decideOverheadBenchmark,
  wasmRulesBenchmark,
  interferenceBenchmark,
  mcpLatencyBenchmark,
];
