import type { Answer } from './when.js';

/** yes at p ≥ yesAt, no below noBelow, unknown between. */
export interface Band {
  readonly yesAt: number;
  readonly noBelow: number;
}

/**
 * Probabilities come back through exp/log round trips, so a value within this of an edge is
 * taken as exactly on it: a score equal to the edge must not fall a rounding error short.
 */
const EDGE_TOLERANCE = 1e-9;

export function answerFor(pYes: number, band: Band): Answer {
  if (pYes >= band.yesAt - EDGE_TOLERANCE) return 'yes';
  if (pYes < band.noBelow - EDGE_TOLERANCE) return 'no';
  return 'unknown';
}

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** Clamped so that a certain answer (p of 0 or 1) stays finite. */
export function logit(p: number): number {
  const q = Math.min(1 - 1e-9, Math.max(1e-9, p));
  return Math.log(q / (1 - q));
}

/** σ(½·logit(p_a) + ½·logit(p_b)): the legacy judge's combined score, bias 0. */
export function meanLogitScore(pA: number, pB: number): number {
  return sigmoid(0.5 * logit(pA) + 0.5 * logit(pB));
}

/** A band is usable when 0 < noBelow ≤ yesAt < 1 and yes needs more than even odds. */
export function bandProblem(band: Band): string | null {
  if (!(band.yesAt > 0.5 && band.yesAt < 1)) return `yes_at must be above 0.5 and below 1 (got ${band.yesAt})`;
  if (!(band.noBelow > 0 && band.noBelow <= band.yesAt)) return `no_below must be above 0 and at most yes_at (got ${band.noBelow})`;
  return null;
}
