import { MCP_SERVER_STATUSES } from '../policy/mcp-registry.js';
import { DEFAULT_FUEL, MAX_FUEL, MIN_FUEL } from '../policy/wasm/fuel.js';
import { z } from 'zod';
import { PII_DETECTOR_IDS, ratePer1kSchema, workspaceSettingsSchema, workspaceSettingsShape } from './settings.js';
import { PROVIDER_IDS, PROVIDERS } from '../upstream/providers.js';
import { decisionTrafficSchema } from '../decide/traffic-settings.js';

/** Provider secret fields are 8–512 characters (seed 001). */
const secret = z.string().min(8).max(512);
const httpUrl = z.url({ protocol: /^https?$/ });

const keyOnlyCredential = z.strictObject({ apiKey: secret.optional(), baseUrl: httpUrl.optional() });

export const providerCredentialsSchema = z.strictObject({
  openai: keyOnlyCredential.optional(),
  anthropic: keyOnlyCredential.optional(),
  gemini: keyOnlyCredential.optional(),
  mistral: keyOnlyCredential.optional(),
  groq: keyOnlyCredential.optional(),
  deepseek: keyOnlyCredential.optional(),
  xai: keyOnlyCredential.optional(),
  azure_openai: z
    .strictObject({ endpoint: httpUrl, apiKey: secret.optional(), apiVersion: z.string().min(1).default('2024-10-21') })
    .optional(),
  aws_bedrock: z
    .strictObject({
      awsRegion: z.string().min(1).max(64),
      awsAccessKeyId: secret.optional(),
      awsSecretAccessKey: secret.optional(),
      apiKey: secret.optional(),
    })
    .refine((c) => c.apiKey !== undefined || (c.awsAccessKeyId !== undefined && c.awsSecretAccessKey !== undefined), {
      message: 'aws_bedrock needs awsAccessKeyId with awsSecretAccessKey, or apiKey',
    })
    .optional(),
  google_vertex: z
    .strictObject({ projectId: z.string().min(1).max(128), location: z.string().min(1).max(64).optional(), serviceAccountJson: z.string().min(8) })
    .optional(),
  ollama: z.strictObject({ apiBase: httpUrl, apiKey: secret.optional() }).optional(),
});

const virtualKey = z.union([
  z.strictObject({ key: z.string().regex(/^vk_[A-Za-z0-9_-]{8,200}$/, 'a virtual key is vk_ followed by 8–200 letters, digits, _ or -'), name: z.string().max(128).optional(), workspaceId: z.string().min(1).max(128).optional() }),
  z.strictObject({ sha256: z.string().regex(/^[0-9a-f]{64}$/), name: z.string().max(128).optional(), workspaceId: z.string().min(1).max(128).optional() }),
]);

export const limitsSchema = z.strictObject({
  /** Largest request body accepted; past it, 413. */
  maxBodyBytes: z.number().int().min(1024).max(1024 * 1024 * 1024).default(32 * 1024 * 1024),
  /** Time allowed for the upstream to send its response headers. */
  upstreamHeadersTimeoutMs: z.number().int().min(100).max(3_600_000).default(600_000),
  /** Longest silence allowed between two chunks of an upstream body. */
  upstreamBodyTimeoutMs: z.number().int().min(100).max(3_600_000).default(300_000),
  /** How long SIGINT/SIGTERM waits for in-flight requests before closing them. */
  drainTimeoutMs: z.number().int().min(0).max(600_000).default(10_000),
  /** Keep-alive connections per upstream origin. */
  upstreamConnections: z.number().int().min(1).max(4096).default(256),
  /**
   * How long the proxy waits for Redis before deciding a reservation locally from the last known
   * counters (reads wait half of it, settlements twice it before queueing for replay).
   */
  storeTimeoutMs: z.number().int().min(10).max(60_000).default(500),
  /** How long the exact response cache (ff_response_cache_exact) keeps an answer. */
  cacheTtlMs: z.number().int().min(1000).max(7 * 24 * 3_600_000).default(10 * 60_000),
  /** Bodies up to this size are inspected on the main thread, larger ones in the worker pool. */
  inlineInspectMaxBytes: z.number().int().min(0).max(1024 * 1024 * 1024).default(256 * 1024),
});

/** WASM policy rules (docs/wasm-rules.md). */
export const wasmRulesSchema = z.strictObject({
  /** Folder of installed rules; `SVC_WASM_DIR` wins, the default is `$SVC_HOME/wasm`. */
  dir: z.string().min(1).max(4096).optional(),
  /** Fuel (about one instruction a unit) one rule may spend on one call before it is stopped and counts as failed. */
  fuel: z.number().int().min(MIN_FUEL).max(MAX_FUEL).default(DEFAULT_FUEL),
  /** No longer used (rules are bounded by `fuel`); still accepted so existing config files load. */
  deadlineMs: z.number().int().min(1).max(10_000).optional(),
  /** Memory each rule instance may grow to. */
  memoryMaxMb: z.number().int().min(1).max(4096).default(16),
  /** What a failed rule (trap, out of fuel, memory) answers: `closed` refuses the call, `open` skips the rule. */
  failurePolicy: z.enum(['closed', 'open']).default('closed'),
  /** Periodic rescan of the folder, backing up the file watcher. */
  rescanMs: z.number().int().min(100).max(60_000).default(2000),
});

/** Models neither prefixed by a provider nor in the catalog: where they go and what they are charged. */
export const unknownModelsSchema = z.strictObject({
  /** The provider of such a model on an OpenAI route (on /v1/messages it is always anthropic). */
  openaiRouteProvider: z
    .enum(PROVIDER_IDS)
    .refine((id) => PROVIDERS[id].speaksOpenAI && PROVIDERS[id].notSupported === undefined, { message: 'must be a provider that serves OpenAI routes' })
    .default('openai'),
  /** Per provider, the price instead of the conservative default (its most expensive catalog prices). */
  prices: z.partialRecord(z.enum(PROVIDER_IDS), ratePer1kSchema).default({}),
});

/** What the MCP server registry says of each server, by name. */
export const mcpServerViewsSchema = z
  .record(z.string().min(1).max(256), z.strictObject({ status: z.enum(MCP_SERVER_STATUSES), disabledTools: z.array(z.string().min(1).max(256)).max(500).default([]) }))
  .refine((servers) => Object.keys(servers).length <= 5000, { message: 'at most 5000 servers' });

export const proxyConfigFileSchema = z.strictObject({
  $schema: z.string().optional(),
  workspaceId: z.string().min(1).max(128).default('local'),
  keys: z.array(virtualKey).max(100_000).default([]),
  providers: providerCredentialsSchema.default({}),
  upstreamUrl: httpUrl.optional(),
  settings: workspaceSettingsSchema.default({}),
  /** This machine's own PII actions; the workspace's settings.piiDetectors is a baseline these may only tighten. */
  piiDetectors: z.partialRecord(z.enum(PII_DETECTOR_IDS), z.enum(['off', 'redact', 'block'])).optional(),
  limits: limitsSchema.default(limitsSchema.parse({})),
  wasm: wasmRulesSchema.default(wasmRulesSchema.parse({})),
  /** This machine's egress posture; the workspace's egressMode wins when set, and its egressAllow adds to this list. */
  egress: z
    .strictObject({ mode: z.enum(['off', 'monitor', 'enforce']).optional(), allow: z.array(z.string().min(1).max(256)).max(512).default([]) })
    .default({ allow: [] }),
  /** This machine's retries and fallbacks; each field the workspace's upstreamRetry sets wins. */
  upstreamRetry: workspaceSettingsShape.upstreamRetry.unwrap().optional(),
  unknownModels: unknownModelsSchema.default(unknownModelsSchema.parse({})),
  /** Bring-your-own-key enforcement: a provider with no credential in `providers` is refused with 402. */
  byokRequired: z.boolean().default(false),
  /** Spend caps in USD (what PUT /budget sets on the control plane); no daily cap means $100 a day. */
  budget: z
    .strictObject({ dailyUsd: z.number().min(0).max(1e9).nullable().optional(), monthlyUsd: z.number().min(0).max(1e9).nullable().optional() })
    .default({}),
  /** How the proxy answers POST /v1/decisions and /v1/decisions/eval. */
  decision_traffic: decisionTrafficSchema.default(decisionTrafficSchema.parse({})),
  /** Decide rule records, besides the `decide:` lines of `.svc/sops/`; each is validated when rules load. */
  decide_rules: z.array(z.unknown()).max(1000).default([]),
  /** The MCP server registry's word on each server it knows (from the control plane, or written here for a local workspace). */
  mcpServers: mcpServerViewsSchema.default({}),
});

export type ProxyConfigFile = z.infer<typeof proxyConfigFileSchema>;
export type ProviderCredentials = z.infer<typeof providerCredentialsSchema>;
export type Limits = z.infer<typeof limitsSchema>;
export type WasmRulesConfig = z.infer<typeof wasmRulesSchema>;
export type UnknownModelsConfig = z.infer<typeof unknownModelsSchema>;
