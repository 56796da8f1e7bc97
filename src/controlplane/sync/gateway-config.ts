import { READ_ONLY_SETTINGS } from '../../config/settings.js';
import type { GatewayConfigDocumentInput } from '../../config/sync-document.js';
import { loadCredentials } from '../credentials/store.js';
import type { Queryable } from '../db/database.js';
import { livePolicies } from '../policies/store.js';
import type { SecretBox } from '../secrets.js';
import { registryViews } from '../mcp-registry/store.js';
import { loadSettings } from '../settings/store.js';
import { wasmRules } from '../wasm-rules/store.js';

/**
 * The whole config one gateway needs, read in one snapshot: the workspace's writable settings
 * (server-kept keys and byocStorage secrets are not for the proxy), its provider credentials, the
 * hashes of its active keys, its caps and the gateway's own bring-your-own-key switch. Provider
 * credentials are included only `withSecrets`. Also the live, enabled policies and every WASM rule
 * with its module.
 */
export async function buildGatewayConfig(
  tx: Queryable,
  secrets: SecretBox,
  gateway: { id: string; workspaceId: string; byokRequired: boolean; withSecrets: boolean },
): Promise<GatewayConfigDocumentInput> {
  const [workspace] = await tx.query<{ config_version: number; budget_daily_usd: number | null; budget_monthly_usd: number | null }>(
    'SELECT config_version, budget_daily_usd, budget_monthly_usd FROM workspaces WHERE id = $1',
    [gateway.workspaceId],
  );
  const { settings } = await loadSettings(tx, secrets, gateway.workspaceId);
  const writable = Object.fromEntries(Object.entries(settings).filter(([key]) => !(READ_ONLY_SETTINGS as readonly string[]).includes(key)));
  const keys = await tx.query<{ key_hash: string; name: string }>('SELECT key_hash, name FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL ORDER BY created_at', [
    gateway.workspaceId,
  ]);
  const credentials = gateway.withSecrets ? await loadCredentials(tx, secrets, gateway.workspaceId) : [];
  const policies = await livePolicies(tx, gateway.workspaceId, true);
  const rules = await wasmRules(tx, gateway.workspaceId, true);
  return {
    gatewayId: gateway.id,
    workspaceId: gateway.workspaceId,
    version: workspace!.config_version,
    config: {
      keys: keys.map((k) => ({ sha256: k.key_hash, name: k.name, workspaceId: gateway.workspaceId })),
      providers: Object.fromEntries(credentials.map((c) => [c.provider, c.fields])),
      settings: writable,
      budget: { dailyUsd: workspace!.budget_daily_usd, monthlyUsd: workspace!.budget_monthly_usd },
      byokRequired: gateway.byokRequired,
      policies: policies.map((p) => ({ id: p.id, name: p.name, version: p.version, decide_rules: p.decide_rules })),
      wasmRules: rules.map((r) => ({ name: r.name, priority: r.priority, sha256: r.sha256, wasm: r.wasm! })),
      mcpServers: await registryViews(tx, gateway.workspaceId),
    },
  };
}
