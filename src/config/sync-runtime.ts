import { buildRuntimeConfig, type RuntimeConfig } from './runtime.js';
import type { GatewayConfigDocument } from './sync-document.js';

export interface LocalSources {
  /** Parsed JSON of this machine's config file, if any. */
  file: unknown;
  upstreamUrl: string | undefined;
  extraKeys: readonly string[];
}

/**
 * The runtime config a control-plane document yields on this machine. The workspace's parts
 * (keys, credentials, settings, caps, byokRequired) come from the document; this machine's own
 * (limits, its PII actions, egress, retries, extra keys) from its config file, as without sync.
 * The decide rules of the document's policies follow the file's own `decide_rules`.
 */
export function runtimeConfigFromDocument(document: GatewayConfigDocument, local: LocalSources): RuntimeConfig {
  const file = (local.file ?? {}) as Record<string, unknown>;
  const localKeys = Array.isArray(file.keys) ? file.keys : [];
  const localProviders = typeof file.providers === 'object' && file.providers !== null ? file.providers : {};
  const localDecideRules = Array.isArray(file.decide_rules) ? file.decide_rules : [];
  return buildRuntimeConfig({
    file: {
      ...file,
      workspaceId: document.workspaceId,
      keys: [...localKeys, ...document.config.keys],
      providers: { ...localProviders, ...document.config.providers },
      settings: document.config.settings,
      budget: document.config.budget,
      byokRequired: document.config.byokRequired || file.byokRequired === true,
      decide_rules: [...localDecideRules, ...document.config.policies.flatMap((p) => p.decide_rules)],
      mcpServers: { ...(typeof file.mcpServers === 'object' && file.mcpServers !== null ? file.mcpServers : {}), ...document.config.mcpServers },
    },
    upstreamUrl: local.upstreamUrl,
    extraKeys: local.extraKeys,
    version: `cp-${document.version}`,
  });
}
