import { z } from 'zod';
import { ANOMALY_DETECTOR_IDS, type WorkspaceSettings } from '../../config/settings.js';
import { ConfigError } from '../../lib/errors.js';
import type { AnomalyDetectorId } from './finding.js';

export type AnomalyMode = 'enforce' | 'warn' | 'off';
export type AnomalyAction = 'off' | 'steer' | 'reask' | 'kill';
export type AnomalyResponse = Exclude<AnomalyAction, 'off'>;

/** Each step intervenes more: steer changes the request, reask also overrules the model's answer, kill refuses. */
export const ACTION_RANK: Readonly<Record<AnomalyAction, number>> = { off: 0, steer: 1, reask: 2, kill: 3 };

/**
 * The most each detector may do. Loops cost money but the agent can be talked out of them;
 * executing fetched code, poisoned tools and growing leaks of sensitive data are stopped.
 */
export const CEILINGS: Readonly<Record<AnomalyDetectorId, AnomalyResponse>> = {
  consecutive_repeat: 'reask',
  ping_pong_cycle: 'reask',
  landmark_cycle: 'steer',
  tool_diversity_collapse: 'steer',
  code_as_action: 'kill',
  tool_poisoning: 'kill',
  dlp_escalation: 'kill',
};

/** Enforce mode acts on findings at or above this confidence (anomaly_enforcement has its own). */
export const ACT_CONFIDENCE = 0.7;

export interface AnomalyEnforcement {
  readonly enabled: boolean;
  readonly minRepeats: number;
  readonly minConfidence: number;
  readonly action: 'HIJACK' | 'KILL';
  /** Detector ids it covers; empty covers all. */
  readonly categories: readonly string[];
}

export interface AnomalyPolicy {
  readonly mode: AnomalyMode;
  /** The action each detector takes in enforce mode: its ceiling, lowered by any override. */
  readonly actions: Readonly<Record<AnomalyDetectorId, AnomalyAction>>;
  /** The overrides in force (workspace over environment), which also cap anomaly_enforcement. */
  readonly overrides: Readonly<Partial<Record<AnomalyDetectorId, AnomalyAction>>>;
  readonly enforcement: AnomalyEnforcement;
  /** Parts of the environment that were ignored, and why; logged once when the policy is applied. */
  readonly ignored: readonly string[];
}

const modeSchema = z.enum(['enforce', 'warn', 'off']);
const actionSchema = z.enum(['steer', 'reask', 'kill', 'off']);
const detectorSchema = z.enum(ANOMALY_DETECTOR_IDS);

/**
 * Checks the workspace's overrides against the ceilings: an override may lower a detector, never
 * raise it. Returns one message per raising override (empty when all are fine); settings that
 * carry any are refused like a value out of bounds.
 */
export function anomalySettingsIssues(settings: Pick<WorkspaceSettings, 'mcpAnomalyOverrides'>): string[] {
  const issues: string[] = [];
  for (const [id, action] of Object.entries(settings.mcpAnomalyOverrides ?? {}) as Array<[AnomalyDetectorId, AnomalyAction]>) {
    if (ACTION_RANK[action] > ACTION_RANK[CEILINGS[id]]) {
      issues.push(`mcpAnomalyOverrides.${id}: '${action}' would raise the detector above its ceiling '${CEILINGS[id]}'; an override may only lower it`);
    }
  }
  return issues;
}

/**
 * `SVC_MCP_ANOMALY_OVERRIDES`: `detector=action` pairs separated by commas (or a JSON object).
 * A malformed entry, an unknown detector or a raising action is ignored and reported.
 */
function envOverrides(raw: string | undefined, ignored: string[]): Partial<Record<AnomalyDetectorId, AnomalyAction>> {
  const out: Partial<Record<AnomalyDetectorId, AnomalyAction>> = {};
  if (raw === undefined || raw.trim() === '') return out;
  let pairs: Array<[string, unknown]>;
  try {
    pairs = raw.trim().startsWith('{') ? Object.entries(z.record(z.string(), z.unknown()).parse(JSON.parse(raw))) : raw.split(',').map((p) => p.split('=').map((s) => s.trim()) as [string, string]);
  } catch {
    ignored.push('SVC_MCP_ANOMALY_OVERRIDES is neither detector=action pairs nor a JSON object; ignored');
    return out;
  }
  for (const [name, value] of pairs) {
    const id = detectorSchema.safeParse(name);
    const action = actionSchema.safeParse(value);
    if (!id.success || !action.success) {
      ignored.push(`SVC_MCP_ANOMALY_OVERRIDES entry '${name}=${String(value)}' names no detector or action; ignored`);
    } else if (ACTION_RANK[action.data] > ACTION_RANK[CEILINGS[id.data]]) {
      ignored.push(`SVC_MCP_ANOMALY_OVERRIDES entry '${name}=${action.data}' would raise the detector above its ceiling '${CEILINGS[id.data]}'; ignored`);
    } else {
      out[id.data] = action.data;
    }
  }
  return out;
}

/**
 * The anomaly policy from workspace settings and the machine's environment (seed 001):
 * `mcpAnomalyMode`, else `SVC_MCP_ANOMALY_MODE`, else enforce; per detector the workspace's
 * override, else the environment's, else the ceiling. Throws a ConfigError when the workspace
 * raises a detector above its ceiling.
 */
export function resolveAnomalyPolicy(settings: WorkspaceSettings, env: NodeJS.ProcessEnv): AnomalyPolicy {
  const issues = anomalySettingsIssues(settings);
  if (issues.length > 0) throw new ConfigError(`invalid config: settings.${issues.join('; settings.')}`);
  const ignored: string[] = [];
  let mode: AnomalyMode = 'enforce';
  if (settings.mcpAnomalyMode !== undefined) mode = settings.mcpAnomalyMode;
  else if (env.SVC_MCP_ANOMALY_MODE !== undefined) {
    const parsed = modeSchema.safeParse(env.SVC_MCP_ANOMALY_MODE);
    if (parsed.success) mode = parsed.data;
    else ignored.push(`SVC_MCP_ANOMALY_MODE '${env.SVC_MCP_ANOMALY_MODE}' is not enforce, warn or off; using enforce`);
  }
  const fromEnv = envOverrides(env.SVC_MCP_ANOMALY_OVERRIDES, ignored);
  const overrides: Partial<Record<AnomalyDetectorId, AnomalyAction>> = { ...fromEnv, ...settings.mcpAnomalyOverrides };
  const actions = {} as Record<AnomalyDetectorId, AnomalyAction>;
  for (const id of ANOMALY_DETECTOR_IDS) actions[id] = overrides[id] ?? CEILINGS[id];
  const e = settings.anomaly_enforcement;
  return {
    mode,
    actions,
    overrides,
    enforcement: {
      enabled: e?.enabled ?? false,
      minRepeats: e?.minRepeats ?? 3,
      minConfidence: e?.minConfidence ?? 0.8,
      action: e?.action ?? 'HIJACK',
      categories: e?.categories ?? [],
    },
    ignored,
  };
}
