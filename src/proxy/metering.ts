import { estimateInputTokens, worstCaseCostUsd, type BudgetSnapshot } from '../state/index.js';
import type { WorkspaceSettings } from '../config/settings.js';
import type { CatalogEntry } from '../upstream/catalog.js';
import type { ResolvedModel } from '../upstream/resolve.js';

/** USD per 1,000 tokens a request is charged at. */
export type Pricing = Pick<CatalogEntry, 'inputPer1k' | 'outputPer1k'>;

/** Output tokens reserved for a request that sets no limit of its own. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** The workspace's contracted rate for the model, else the catalog's list price, else nothing to charge. */
export function pricingFor(model: ResolvedModel, settings: WorkspaceSettings): Pricing | undefined {
  const contracted = settings.contractedRates?.[model.requested] ?? settings.contractedRates?.[model.upstreamModel];
  if (contracted !== undefined) return { inputPer1k: contracted.inputCostPer1k, outputPer1k: contracted.outputCostPer1k };
  return model.entry;
}

/** The most output a request allows, by whichever field its API uses. */
export function maxOutputTokens(body: Record<string, unknown>): number {
  for (const field of ['max_completion_tokens', 'max_output_tokens', 'max_tokens']) {
    const value = body[field];
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
  }
  return DEFAULT_MAX_OUTPUT_TOKENS;
}

/** What is reserved before a request is sent: all of its input and the most output it allows. */
export function reservationUsd(pricing: Pricing | undefined, raw: Buffer, body: Record<string, unknown>): number {
  if (pricing === undefined) return 0;
  return worstCaseCostUsd({ inputTokens: estimateInputTokens(raw), maxOutputTokens: maxOutputTokens(body), ...pricing });
}

export interface Caps {
  dailyUsd: number;
  monthlyUsd: number | null;
}

const usd = (n: number) => (Math.round(Math.max(0, n) * 1e6) / 1e6).toString();

/** `X-Svc-Budget-*`: each cap and what is left of it, counting requests in flight. */
export function budgetHeaders(budget: BudgetSnapshot, caps: Caps): Array<[string, string]> {
  const headers: Array<[string, string]> = [
    ['x-svc-budget-daily-limit', usd(caps.dailyUsd)],
    ['x-svc-budget-daily-remaining', usd(caps.dailyUsd - budget.spentTodayUsd - budget.reservedTodayUsd)],
  ];
  if (caps.monthlyUsd !== null) {
    headers.push(['x-svc-budget-monthly-limit', usd(caps.monthlyUsd)]);
    headers.push(['x-svc-budget-monthly-remaining', usd(caps.monthlyUsd - budget.spentMonthUsd - budget.reservedMonthUsd)]);
  }
  return headers;
}
