import { costUsd } from '../upstream/catalog.js';

/** Pricing a request before it is sent, and the budget rules of seed 001 that are not per-request state. */

export { nextUtcMidnight, nextUtcMonthStart } from './periods.js';

/** Seed 001: "A workspace that has not saved a daily cap is held to $100 a day." */
export const DEFAULT_DAILY_CAP_USD = 100;

/** The daily cap a workspace is held to: its saved cap, else the default. */
export function dailyCapUsd(saved: number | null | undefined): number {
  return saved ?? DEFAULT_DAILY_CAP_USD;
}

/** Seed 001: the hard cap blocks only with `enforcement_mode: hard` and `workspace_hard_cap_enabled: true`. */
export function hardCapEnforced(settings: { enforcement_mode?: 'soft' | 'hard'; workspace_hard_cap_enabled?: boolean }): boolean {
  return settings.enforcement_mode === 'hard' && settings.workspace_hard_cap_enabled === true;
}

/**
 * The most a request can cost: all of its input plus the most output it allows, at the model's
 * per-1k rates (catalog list prices or the workspace's contractedRates). This is what is reserved.
 */
export function worstCaseCostUsd(r: { inputTokens: number; maxOutputTokens: number; inputPer1k: number; outputPer1k: number }): number {
  return costUsd(r, r.inputTokens, r.maxOutputTokens);
}

/**
 * A rough input-token count for reserving before the provider counts: about 4 characters per token
 * for English and code under BPE tokenizers. Measuring the whole JSON body (keys, quotes, tool
 * schemas) overestimates the prompt a little, which errs toward reserving too much, never too little.
 */
export function estimateInputTokens(body: string | Buffer): number {
  // A Buffer's byte length is at least its character count: still an overestimate.
  return estimateTokens(body.length);
}

/** Tokens in `length` characters (or bytes) of text, at the same four per token. */
export function estimateTokens(length: number): number {
  return Math.ceil(length / 4);
}
