import { ProviderNotSupportedError, UnknownModelError } from '../lib/errors.js';
import type { CatalogEntry, ModelCatalog } from './catalog.js';
import { providerById, type ProviderSpec } from './providers.js';

export interface ResolvedModel {
  /** The model id as the client sent it. */
  readonly requested: string;
  /** The model id the upstream receives (a `provider/` prefix removed). */
  readonly upstreamModel: string;
  readonly provider: ProviderSpec;
  /** Catalog entry for pricing, when the model is in the catalog. */
  readonly entry: CatalogEntry | undefined;
}

/**
 * Model → provider: a `provider/model` prefix (a provider id or alias) wins, then the catalog,
 * else 400 naming the model. A model whose own id has a slash is reached through its provider's
 * prefix (`groq/openai/gpt-oss-120b`).
 */
export function resolveModel(model: string, catalog: ModelCatalog): ResolvedModel {
  const slash = model.indexOf('/');
  if (slash > 0) {
    const provider = providerById(model.slice(0, slash));
    if (provider !== undefined) {
      const upstreamModel = model.slice(slash + 1);
      if (upstreamModel.length === 0) throw new UnknownModelError(model);
      return { requested: model, upstreamModel, provider, entry: catalog.lookup(upstreamModel) };
    }
  }
  const entry = catalog.lookup(model);
  if (entry === undefined) throw new UnknownModelError(model);
  const provider = providerById(entry.provider)!;
  return { requested: model, upstreamModel: model, provider, entry };
}

export function assertSupported(provider: ProviderSpec): void {
  if (provider.notSupported !== undefined) throw new ProviderNotSupportedError(provider.id, provider.notSupported);
}
