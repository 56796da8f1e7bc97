import { estimateInputTokens, worstCaseCostUsd, type BudgetSnapshot } from '../state/index.js';
import type { WorkspaceSettings } from '../config/settings.js';
import type { UnknownModelsConfig } from '../config/proxy-config.js';
import type { ModelCatalog, Price } from '../upstream/catalog.js';
import type { ProviderSpec } from '../upstream/providers.js';
import type { ResolvedModel } from '../upstream/resolve.js';

/** USD per 1,000 tokens a request is charged at. */
export interface Pricing extends Price {
  /** Not the model's own price but the conservative one for a model the catalog does not price. */
  readonly estimated: boolean;
}

/** Output tokens reserved for a request that sets no limit of its own. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * What a model the catalog does not price is charged, so that no model name, new or made up, is a
 * way past a cap: the price the config names for its provider, else the highest input and output
 * prices among the provider's catalog models (the whole catalog's for a provider with none listed).
 */
export function conservativePrice(provider: ProviderSpec, catalog: ModelCatalog, named: UnknownModelsConfig['prices']): Price {
  const configured = named[provider.id];
  if (configured !== undefined) return { inputPer1k: configured.inputCostPer1k, outputPer1k: configured.outputCostPer1k };
  // The catalog is never empty (it ships with the proxy), so there is always a highest price.
  return catalog.highestPrice(provider.id)!;
}

/** The workspace's contracted rate for the model, else the catalog's list price, else the conservative price. */
export function pricingFor(model: ResolvedModel, settings: WorkspaceSettings, unknownPrice: (provider: ProviderSpec) => Price): Pricing {
  const contracted = settings.contractedRates?.[model.requested] ?? settings.contractedRates?.[model.upstreamModel];
  if (contracted !== undefined) return { inputPer1k: contracted.inputCostPer1k, outputPer1k: contracted.outputCostPer1k, estimated: false };
  if (model.entry !== undefined) return { inputPer1k: model.entry.inputPer1k, outputPer1k: model.entry.outputPer1k, estimated: false };
  return { ...unknownPrice(model.provider), estimated: true };
}

/** The most output a request allows, by whichever field its API uses. */
export function maxOutputTokens(body: Record<string, unknown>): number {
  for (const field of ['max_completion_tokens', 'max_output_tokens', 'max_tokens']) {
    const value = body[field];
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
  }
  return DEFAULT_MAX_OUTPUT_TOKENS;
}

/** What is reserved before a request is sent: all of its input and the most output it allows (`maxOutputTokens`). */
export function reservationUsd(pricing: Price, raw: Buffer, outputLimit: number): number {
  return worstCaseCostUsd({ inputTokens: estimateInputTokens(raw), maxOutputTokens: outputLimit, inputPer1k: pricing.inputPer1k, outputPer1k: pricing.outputPer1k });
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
