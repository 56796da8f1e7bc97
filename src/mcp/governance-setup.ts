import { join } from 'node:path';
import { ControlPlaneApi } from '../config/control-plane-api.js';
import type { Logger } from '../lib/logger.js';
import type { McpServerView } from '../policy/mcp-registry.js';
import { createStore, type Store } from '../state/index.js';
import { TraceSink } from '../traces/sink.js';
import { McpGovernance, type FailBehavior, type GovernanceSettings } from './governance.js';
import { ControlPlaneRegistry } from './registry-client.js';
import { loadMcpSettings, type LoadedSettings } from './settings-source.js';
import { mcpTraceShipper } from './trace-shipping.js';

/** Where a machine's MCP governance comes from: shared by `svc mcp wrap`, `svc mcp proxy` and `svc mcp daemon`. */
export interface GovernanceSources {
  readonly configFile: string | undefined;
  readonly home: string;
  /** What to do when no settings can be loaded (the settings' own mcpProxyFailBehavior cannot be read then). */
  readonly failBehavior: FailBehavior;
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  /** Redis/Valkey shared by every wrapper counting mcpBudgets; without it, each process counts alone. */
  readonly valkeyUrl: string | undefined;
  /** The control plane keeping the MCP server registry; without it, the registry is what the config says. */
  readonly controlPlane: { readonly url: string; readonly apiKey: string } | undefined;
}

export interface GovernanceOptions extends GovernanceSources {
  readonly server: string;
}

/** The settings to govern with, or why there are none (logged). */
export async function governanceSettings(opts: GovernanceSources, loaded?: LoadedSettings): Promise<GovernanceSettings> {
  const result = loaded ?? (await loadMcpSettings({ configFile: opts.configFile, home: opts.home }));
  if (result.ok) return { ok: true, config: result.config };
  opts.logger.warn({ failBehavior: opts.failBehavior, reason: result.reason }, 'MCP settings could not be loaded');
  return { ok: false, reason: result.reason, failBehavior: opts.failBehavior };
}

export function openStore(opts: GovernanceSources): Promise<Store> {
  return createStore({ valkeyUrl: opts.valkeyUrl, logger: opts.logger });
}

/** The control plane's registry for one server, when there is a control plane. */
export function controlPlaneRegistry(opts: GovernanceSources, server: string, synced: McpServerView | undefined): ControlPlaneRegistry | undefined {
  if (opts.controlPlane === undefined) return undefined;
  const api = new ControlPlaneApi({ controlPlaneUrl: opts.controlPlane.url, apiKey: opts.controlPlane.apiKey });
  return new ControlPlaneRegistry(server, api, opts.logger, synced, Number(opts.env.SVC_MCP_REGISTRY_REFRESH_MS) || undefined);
}

/** One server's governance in this process, and what closes it. */
export async function openGovernance(opts: GovernanceOptions): Promise<{ governance: McpGovernance; close: () => Promise<void> }> {
  const settings = await governanceSettings(opts);
  const store = await openStore(opts);
  const registry = controlPlaneRegistry(opts, opts.server, settings.ok ? settings.config.mcpServers[opts.server] : undefined);
  const governance = new McpGovernance(opts.server, settings, opts.env, store, registry === undefined ? {} : { registry });
  return { governance, close: () => store.close() };
}

/** Where a proxy's call traces go: `$SVC_HOME/mcp-traces`, and the control plane when there is one. */
export async function openCallTraces(opts: GovernanceOptions): Promise<{ sink: TraceSink; close: () => Promise<void> }> {
  const shipper =
    opts.controlPlane === undefined
      ? undefined
      : await mcpTraceShipper({ home: opts.home, server: opts.server, controlPlaneUrl: opts.controlPlane.url, apiKey: opts.controlPlane.apiKey, logger: opts.logger });
  const sink = new TraceSink({ dir: join(opts.home, 'mcp-traces'), logger: opts.logger, ...(shipper === undefined ? {} : { forward: (trace, line) => shipper.enqueue(trace, line) }) });
  return {
    sink,
    close: async () => {
      await sink.close();
      await shipper?.close();
    },
  };
}
