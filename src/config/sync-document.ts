import { createHash } from 'node:crypto';
import { z } from 'zod';
import { INT32_MAX } from '../lib/storable.js';
import { decideRecordSchema } from '../decide/record.js';
import { proxyConfigFileSchema } from './proxy-config.js';

const file = proxyConfigFileSchema.shape;

/** At most this many decide rules per policy: each enforcing rule may cost a model call. */
export const MAX_POLICY_RULES = 100;
/** The largest WASM rule module the control plane hands out (decoded). */
export const MAX_WASM_RULE_BYTES = 1024 * 1024;

/** A policy's decide rules: each record checked by the decide record schema, ids unique. */
export const policyDecideRulesSchema = z
  .array(decideRecordSchema)
  .max(MAX_POLICY_RULES)
  .superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.forEach((r, i) => {
      if (seen.has(r.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `'${r.id}' is used by an earlier rule of this policy` });
      seen.add(r.id);
    });
  });

/** A control-plane WASM rule's name: a gateway installs it as `{priority}_cp-{name}.wasm`. */
export const wasmRuleNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,99}$/, 'a name is 1–100 lowercase letters, digits, dot, dash or underscore, starting with a letter or digit');
export const wasmRulePrioritySchema = z.number().int().min(0).max(999);
/** Standard base64 of a module, at most MAX_WASM_RULE_BYTES decoded. */
export const wasmBase64Schema = z
  .string()
  .min(1)
  .max(Math.ceil(MAX_WASM_RULE_BYTES / 3) * 4)
  .regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, 'the module is standard base64');

const policySchema = z.strictObject({
  id: z.string().min(1).max(128),
  name: z.string().min(1).max(128),
  version: z.number().int().min(1),
  decide_rules: policyDecideRulesSchema,
});

const wasmRuleSchema = z
  .strictObject({ name: wasmRuleNameSchema, priority: wasmRulePrioritySchema, sha256: z.string().regex(/^[0-9a-f]{64}$/), wasm: wasmBase64Schema })
  .superRefine((rule, ctx) => {
    const bytes = Buffer.from(rule.wasm, 'base64');
    if (createHash('sha256').update(bytes).digest('hex') !== rule.sha256) ctx.addIssue({ code: 'custom', path: ['sha256'], message: 'does not match the module' });
    else if (!WebAssembly.validate(bytes)) ctx.addIssue({ code: 'custom', path: ['wasm'], message: 'not a valid WebAssembly module' });
  });

/** Names and decide rule ids each name one thing on a gateway. */
function refuseDuplicates<T>(items: readonly T[], keyOf: (item: T) => string[], path: (index: number) => PropertyKey[], what: string, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    for (const key of keyOf(item)) {
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: path(i), message: `${what} '${key}' appears twice` });
      seen.add(key);
    }
  });
}

/**
 * What GET /api/v1/gateways/:id/config answers: everything a proxy takes from the control plane,
 * each part validated by the same schema as the proxy's own config file.
 */
export const gatewayConfigDocumentSchema = z.strictObject({
  gatewayId: z.string().min(1),
  workspaceId: z.string().min(1).max(128),
  /** The workspace's config version; every settings, credentials, keys or budget write bumps it. */
  version: z.number().int().min(1),
  config: z.strictObject({
    /** sha256 of every active vk_ key of the workspace. */
    keys: file.keys,
    providers: file.providers,
    settings: file.settings,
    budget: file.budget,
    byokRequired: file.byokRequired,
    /** The live, enabled policies: their decide rules become the gateway's config-supplied decide rules. */
    policies: z
      .array(policySchema)
      .max(1000)
      .default([])
      .superRefine((policies, ctx) => refuseDuplicates(policies, (p) => p.decide_rules.map((r) => r.id), (i) => [i, 'decide_rules'], 'decide rule id', ctx)),
    /** The workspace's WASM rules, each module whole (base64) with its SHA-256. */
    wasmRules: z
      .array(wasmRuleSchema)
      .max(1000)
      .default([])
      .superRefine((rules, ctx) => refuseDuplicates(rules, (r) => [r.name], (i) => [i, 'name'], 'WASM rule name', ctx)),
    /** The MCP server registry: approved, pending, held and blocked servers and their switched-off tools. */
    mcpServers: file.mcpServers,
  }),
});

export type GatewayConfigDocument = z.infer<typeof gatewayConfigDocumentSchema>;
export type GatewayConfigDocumentInput = z.input<typeof gatewayConfigDocumentSchema>;

/** POST /gateways/:id/config-ack */
export const configAckSchema = z
  .strictObject({
    version: z.number().int().min(1).max(INT32_MAX),
    status: z.enum(['applied', 'rejected']),
    reason: z.string().min(1).max(2000).optional(),
  })
  .refine((a) => a.status === 'applied' || a.reason !== undefined, { message: 'a rejected config needs a reason', path: ['reason'] });

/** POST /gateways/:id/heartbeat */
export const heartbeatSchema = z.strictObject({
  /** The config version the proxy is serving with. */
  configVersion: z.number().int().min(0).max(INT32_MAX).optional(),
  inflight: z.number().int().min(0).optional(),
  tracesSpilled: z.number().int().min(0).optional(),
  tracesDropped: z.number().int().min(0).optional(),
  /** Records the control plane refused, kept in the proxy's dead-letter file. */
  tracesDeadLettered: z.number().int().min(0).optional(),
  proxyVersion: z.string().max(64).optional(),
});

export type ConfigAck = z.infer<typeof configAckSchema>;
export type Heartbeat = z.infer<typeof heartbeatSchema>;
