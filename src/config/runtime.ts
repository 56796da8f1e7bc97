import type { McpServerView } from '../policy/mcp-registry.js';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '../lib/errors.js';
import { describeZodError } from './zod-error.js';
import { proxyConfigFileSchema, type Limits, type ProviderCredentials, type UnknownModelsConfig, type WasmRulesConfig } from './proxy-config.js';
import type { PiiDetectorId, WorkspaceSettings } from './settings.js';
import { dailyCapUsd } from '../state/budget.js';
import type { RetrySettings } from '../upstream/retry-plan.js';
import type { DecisionTrafficSettings } from '../decide/traffic-settings.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

export interface VirtualKeyEntry {
  readonly name: string | undefined;
  readonly workspaceId: string;
}

/** One immutable, versioned configuration; the proxy swaps whole objects, never edits one. */
export interface RuntimeConfig {
  readonly version: string;
  readonly workspaceId: string;
  /** sha256(hex) of each accepted virtual key → who it belongs to. */
  readonly keys: ReadonlyMap<string, VirtualKeyEntry>;
  /** No key configured: any caller is accepted (loopback only). */
  readonly openMode: boolean;
  readonly providers: ProviderCredentials;
  readonly upstreamUrl: string | undefined;
  readonly settings: WorkspaceSettings;
  /** This machine's own PII actions (tighten-only over the workspace's). */
  readonly piiDetectors: Readonly<Partial<Record<PiiDetectorId, 'off' | 'redact' | 'block'>>> | undefined;
  readonly limits: Limits;
  /** WASM rules: read when the proxy starts. */
  readonly wasm: WasmRulesConfig;
  readonly egress: { readonly mode: 'off' | 'monitor' | 'enforce' | undefined; readonly allow: readonly string[] };
  readonly byokRequired: boolean;
  /** Where models outside the catalog go on OpenAI routes, and prices named for them. */
  readonly unknownModels: UnknownModelsConfig;
  /** This machine's own upstreamRetry fields. */
  readonly upstreamRetry: Partial<RetrySettings> | undefined;
  /** Spend caps: the saved daily cap or $100, and the monthly cap if one is saved. */
  readonly caps: { readonly dailyUsd: number; readonly monthlyUsd: number | null };
  readonly decisionTraffic: DecisionTrafficSettings;
  /** Decide rule records from the config file, read when decide rules load. */
  readonly decideRules: readonly unknown[];
  /** The MCP server registry's word on each server it knows. */
  readonly mcpServers: Readonly<Record<string, McpServerView>>;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export interface ConfigSources {
  /** Parsed JSON of the config file, if any. */
  file?: unknown;
  /** Overrides from flags and environment. */
  upstreamUrl?: string | undefined;
  extraKeys?: readonly string[];
  /** The version to carry (a control-plane config's); by default a hash of the sources. */
  version?: string;
}

export function buildRuntimeConfig(sources: ConfigSources): RuntimeConfig {
  const parsed = proxyConfigFileSchema.safeParse(sources.file ?? {});
  if (!parsed.success) throw new ConfigError(`invalid config: ${describeZodError(parsed.error)}`);
  const file = parsed.data;
  const keys = new Map<string, VirtualKeyEntry>();
  for (const k of file.keys) {
    const hash = 'key' in k ? hashKey(k.key) : k.sha256;
    keys.set(hash, { name: k.name, workspaceId: k.workspaceId ?? file.workspaceId });
  }
  for (const key of sources.extraKeys ?? []) {
    if (!/^vk_[A-Za-z0-9_-]{8,200}$/.test(key)) throw new ConfigError('SVC_VIRTUAL_KEYS holds a value that is not a vk_ key');
    keys.set(hashKey(key), { name: undefined, workspaceId: file.workspaceId });
  }
  let upstreamUrl = sources.upstreamUrl ?? file.upstreamUrl;
  if (upstreamUrl !== undefined) {
    const checked = z.url({ protocol: /^https?$/ }).safeParse(upstreamUrl);
    if (!checked.success) throw new ConfigError(`invalid upstream URL '${upstreamUrl}'`);
    upstreamUrl = withoutTrailingSlashes(upstreamUrl);
  }
  const version =
    sources.version ??
    'local-' +
    createHash('sha256')
      .update(JSON.stringify([file, upstreamUrl, [...keys.keys()]]))
      .digest('hex')
      .slice(0, 12);
  return Object.freeze({
    version,
    workspaceId: file.workspaceId,
    keys,
    openMode: keys.size === 0,
    providers: file.providers,
    upstreamUrl,
    settings: file.settings,
    piiDetectors: file.piiDetectors,
    limits: file.limits,
    wasm: file.wasm,
    caps: { dailyUsd: dailyCapUsd(file.budget.dailyUsd), monthlyUsd: file.budget.monthlyUsd ?? null },
    egress: { mode: file.egress.mode, allow: file.egress.allow },
    byokRequired: file.byokRequired,
    unknownModels: file.unknownModels,
    upstreamRetry: file.upstreamRetry,
    decisionTraffic: file.decision_traffic,
    decideRules: file.decide_rules,
    mcpServers: file.mcpServers,
  });
}

export async function readConfigFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}
