import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { z } from 'zod';
import { describeZodError } from '../config/zod-error.js';
import { ConfigError } from '../lib/errors.js';
import { svcHome } from '../lib/paths.js';
import { bandProblem, type Band } from './band.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

/** A known-answer question asked of the engine at start and periodically. */
export interface CanaryQuestion {
  readonly ask: string;
  readonly subject: string;
  readonly expect: 'yes' | 'no';
}

export const DEFAULT_CANARIES: readonly CanaryQuestion[] = [
  { ask: 'Does the subject state that two plus two equals four?', subject: 'Two plus two equals four.', expect: 'yes' },
  { ask: 'Does the subject mention an animal?', subject: 'The invoice total is 42 euros.', expect: 'no' },
];

const canarySchema = z.strictObject({ ask: z.string().min(1).max(1000), subject: z.string().max(4000), expect: z.enum(['yes', 'no']) });

export const engineFileSchema = z.strictObject({
  /** OpenAI-compatible base URL of a self-hosted model server, e.g. http://127.0.0.1:8000/v1 */
  url: z.url({ protocol: /^https?$/ }).optional(),
  model: z.string().min(1).max(256).optional(),
  api_key: z.string().min(1).max(512).optional(),
  yes_at: z.number().gt(0).lt(1).default(0.8),
  no_below: z.number().gt(0).lt(1).default(0.2),
  /** Time allowed for one rule's questions. */
  timeout_ms: z.number().int().min(50).max(60_000).default(2000),
  cache_ttl_ms: z.number().int().min(0).max(3_600_000).default(60_000),
  canary_interval_ms: z.number().int().min(1000).max(86_400_000).default(300_000),
  canaries: z.array(canarySchema).min(1).max(16).optional(),
  /** Host names the operator runs themselves, beyond loopback, private addresses and local names. */
  self_hosted_hosts: z.array(z.string().min(1).max(253)).max(64).default([]),
});

export type EngineFile = z.infer<typeof engineFileSchema>;

/** The engine as configured; `null` url or model means not configured. */
export interface EngineConfig {
  readonly url: string | null;
  readonly model: string | null;
  readonly apiKey: string | null;
  readonly band: Band;
  readonly timeoutMs: number;
  readonly cacheTtlMs: number;
  readonly canaryIntervalMs: number;
  readonly canaries: readonly CanaryQuestion[];
  readonly selfHostedHosts: readonly string[];
}

export function engineFilePath(env: NodeJS.ProcessEnv): string {
  return join(svcHome(env), 'decide', 'engine.json');
}

const ENV_FIELDS = {
  SVC_DECIDE_URL: 'url',
  SVC_DECIDE_MODEL: 'model',
  SVC_DECIDE_API_KEY: 'api_key',
  SVC_DECIDE_YES_AT: 'yes_at',
  SVC_DECIDE_NO_BELOW: 'no_below',
  SVC_DECIDE_TIMEOUT_MS: 'timeout_ms',
  SVC_DECIDE_CACHE_TTL_MS: 'cache_ttl_ms',
  SVC_DECIDE_CANARY_INTERVAL_MS: 'canary_interval_ms',
} as const;
const NUMERIC = new Set(['yes_at', 'no_below', 'timeout_ms', 'cache_ttl_ms', 'canary_interval_ms']);

/** The file's fields, each overridden by its `SVC_DECIDE_*` variable when set. */
export function buildEngineConfig(file: unknown, env: NodeJS.ProcessEnv): EngineConfig {
  const merged: Record<string, unknown> = typeof file === 'object' && file !== null ? { ...file } : {};
  for (const [name, field] of Object.entries(ENV_FIELDS)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    merged[field] = NUMERIC.has(field) ? Number(value) : value;
  }
  const parsed = engineFileSchema.safeParse(merged);
  if (!parsed.success) throw new ConfigError(`invalid decide engine config: ${describeZodError(parsed.error)}`);
  const f = parsed.data;
  const band = { yesAt: f.yes_at, noBelow: f.no_below };
  const problem = bandProblem(band);
  if (problem !== null) throw new ConfigError(`invalid decide engine config: ${problem}`);
  return Object.freeze({
    url: f.url === undefined ? null : withoutTrailingSlashes(f.url),
    model: f.model ?? null,
    apiKey: f.api_key ?? null,
    band,
    timeoutMs: f.timeout_ms,
    cacheTtlMs: f.cache_ttl_ms,
    canaryIntervalMs: f.canary_interval_ms,
    canaries: f.canaries ?? DEFAULT_CANARIES,
    selfHostedHosts: f.self_hosted_hosts.map((h) => h.toLowerCase()),
  });
}

/** `~/.svc/decide/engine.json` (absent is fine) plus the `SVC_DECIDE_*` variables, read once at start. */
export async function readEngineConfig(env: NodeJS.ProcessEnv): Promise<EngineConfig> {
  const path = engineFilePath(env);
  let file: unknown = {};
  try {
    file = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new ConfigError(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  return buildEngineConfig(file, env);
}

const LOCAL_SUFFIXES = ['.local', '.internal', '.lan', '.home.arpa', '.localhost', '.svc', '.cluster.local'];

function isPrivateAddress(host: string): boolean {
  if (isIP(host) === 4) {
    const [a, b] = host.split('.').map(Number) as [number, number];
    return a === 10 || a === 127 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127);
  }
  const v6 = host.toLowerCase();
  return v6 === '::1' || v6.startsWith('fc') || v6.startsWith('fd') || v6.startsWith('fe80:');
}

/**
 * A self-hosted model server: loopback, a private address, a single-label or local-suffix name
 * (a container or cluster service), or a host the operator listed. Anything else is a hosted
 * decision API, which decide rules refuse to use.
 */
export function isSelfHosted(url: string, extraHosts: readonly string[]): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (extraHosts.includes(host)) return true;
  if (host === 'localhost' || isPrivateAddress(host)) return true;
  if (isIP(host) !== 0) return false;
  return !host.includes('.') || LOCAL_SUFFIXES.some((s) => host.endsWith(s));
}
