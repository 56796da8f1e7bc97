import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { PROVIDER_IDS, type ProviderId } from './providers.js';

const catalogSchema = z.object({
  updated: z.string(),
  models: z.record(z.string(), z.strictObject({ provider: z.enum(PROVIDER_IDS), input: z.number().min(0), output: z.number().min(0) })),
});

export interface CatalogEntry {
  readonly id: string;
  readonly provider: ProviderId;
  /** List price, USD per 1,000 input tokens. */
  readonly inputPer1k: number;
  /** List price, USD per 1,000 output tokens. */
  readonly outputPer1k: number;
}

export class ModelCatalog {
  readonly updated: string;
  private readonly exact: Map<string, CatalogEntry>;
  /** Ids longest first, for dated-snapshot lookup. */
  private readonly byLength: CatalogEntry[];
  private readonly resolved = new Map<string, CatalogEntry | null>();

  constructor(data: unknown) {
    const parsed = catalogSchema.parse(data);
    this.updated = parsed.updated;
    this.exact = new Map(
      Object.entries(parsed.models).map(([id, m]) => [id, { id, provider: m.provider, inputPer1k: m.input, outputPer1k: m.output }]),
    );
    this.byLength = [...this.exact.values()].sort((a, b) => b.id.length - a.id.length);
  }

  static load(url = new URL('../../rules/models.json', import.meta.url)): ModelCatalog {
    return new ModelCatalog(JSON.parse(readFileSync(url, 'utf8')));
  }

  /** The entry for a model id, or for the longest catalog id it extends with `-…` (a dated snapshot). */
  lookup(model: string): CatalogEntry | undefined {
    const hit = this.resolved.get(model);
    if (hit !== undefined) return hit ?? undefined;
    let entry = this.exact.get(model);
    if (entry === undefined) entry = this.byLength.find((e) => model.startsWith(e.id + '-'));
    if (this.resolved.size < 10_000) this.resolved.set(model, entry ?? null);
    return entry;
  }

  entries(): Iterable<CatalogEntry> {
    return this.exact.values();
  }
}

/** USD cost of a call at catalog prices. */
export function costUsd(entry: Pick<CatalogEntry, 'inputPer1k' | 'outputPer1k'>, inputTokens: number, outputTokens: number): number {
  return (inputTokens * entry.inputPer1k + outputTokens * entry.outputPer1k) / 1000;
}
