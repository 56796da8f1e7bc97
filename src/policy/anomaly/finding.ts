import type { ANOMALY_DETECTOR_IDS } from '../../config/settings.js';

export type AnomalyDetectorId = (typeof ANOMALY_DETECTOR_IDS)[number];

/** What an anomaly detector found: never arguments or results, which may hold secrets. */
export interface AnomalyFinding {
  readonly detector: AnomalyDetectorId;
  /** 0–1. */
  readonly confidence: number;
  /** How many times the pattern has repeated (passes through a loop, turns of growth, hits). */
  readonly repeats: number;
  /** The tools involved, in order of first appearance. */
  readonly tools: readonly string[];
  /** One line for the trace and the card, e.g. `run_tests called 4 times in a row, same error each time`. */
  readonly summary: string;
}

/**
 * A loop's calls by key (tool and canonical arguments): an answer that makes one of them again
 * continues the loop. Kept apart from the finding because arguments may hold secrets; it never
 * reaches the trace.
 */
export interface LoopFinding extends AnomalyFinding {
  readonly loopKeys: readonly string[];
}

export const round2 = (n: number): number => Math.round(Math.min(0.99, n) * 100) / 100;
