import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile, copyFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { backupPath, readJsonConfig, writeJsonConfig } from './config-file.js';

/**
 * Pointing each harness's model traffic at the local proxy (`svc init`): the settings each harness
 * reads its base URL and key from. Each writer is idempotent and keeps `<file>.svc-backup` of the
 * original the first time.
 */

export const INIT_HARNESSES = ['claude-code', 'codex', 'cursor', 'gemini', 'opencode', 'continue', 'goose', 'cline', 'windsurf'] as const;
export type InitHarness = (typeof INIT_HARNESSES)[number];

/** Where each harness keeps its config under the home directory (how `svc init` detects it). */
export const HARNESS_HOMES: Readonly<Record<InitHarness, string>> = {
  'claude-code': '.claude',
  codex: '.codex',
  cursor: '.cursor',
  gemini: '.gemini',
  opencode: join('.config', 'opencode'),
  continue: '.continue',
  goose: join('.config', 'goose'),
  cline: '.cline',
  windsurf: join('.codeium', 'windsurf'),
};

export function detectHarnesses(home: string): InitHarness[] {
  return INIT_HARNESSES.filter((h) => existsSync(join(home, HARNESS_HOMES[h])));
}

export interface BaseUrlChange {
  readonly harness: InitHarness;
  readonly file: string | null;
  readonly changed: boolean;
  /** Why nothing could be written (the harness keeps its base URL where svc cannot set it). */
  readonly note: string | null;
}

async function writeText(file: string, text: string): Promise<void> {
  if (existsSync(file)) await copyFile(file, backupPath(file), 1).catch(() => undefined);
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, text, { mode: 0o600 });
  await rename(temp, file);
}

/** Claude Code: `env` in `~/.claude/settings.json` (the proxy's address and the workspace key as a bearer token). */
async function claudeCode(home: string, proxyUrl: string, apiKey: string): Promise<BaseUrlChange> {
  const file = join(home, '.claude', 'settings.json');
  const config = (await readJsonConfig(file)) ?? {};
  const env = (typeof config.env === 'object' && config.env !== null ? config.env : {}) as Record<string, unknown>;
  if (env.ANTHROPIC_BASE_URL === proxyUrl && env.ANTHROPIC_AUTH_TOKEN === apiKey) return { harness: 'claude-code', file, changed: false, note: null };
  await writeJsonConfig(file, { ...config, env: { ...env, ANTHROPIC_BASE_URL: proxyUrl, ANTHROPIC_AUTH_TOKEN: apiKey } });
  return { harness: 'claude-code', file, changed: true, note: null };
}

const CODEX_BLOCK = (proxyUrl: string) => ['[model_providers.svc]', 'name = "svc"', `base_url = "${proxyUrl}/v1"`, 'env_key = "SVC_API_KEY"', 'wire_api = "responses"'].join('\n');

/**
 * Codex: a `svc` model provider in `~/.codex/config.toml` (the key from SVC_API_KEY, which `svc exec`
 * sets) and `model_provider = "svc"` among the top-level keys.
 */
async function codex(home: string, proxyUrl: string): Promise<BaseUrlChange> {
  const file = join(home, '.codex', 'config.toml');
  const text = await readFile(file, 'utf8').catch(() => '');
  const lines = text.split('\n');
  const firstTable = lines.findIndex((l) => /^\s*\[/.test(l));
  const top = firstTable === -1 ? lines : lines.slice(0, firstTable);
  const rest = firstTable === -1 ? [] : lines.slice(firstTable);
  const block = CODEX_BLOCK(proxyUrl);
  const providerAt = top.findIndex((l) => /^\s*model_provider\s*=/.test(l));
  const newTop = providerAt === -1 ? ['model_provider = "svc"', ...top] : top.map((l, i) => (i === providerAt ? 'model_provider = "svc"' : l));
  // svc's own table, replaced whole (it runs to the next table header).
  const start = rest.findIndex((l) => l.trim() === '[model_providers.svc]');
  let tables = rest;
  if (start !== -1) {
    const end = rest.findIndex((l, i) => i > start && /^\s*\[/.test(l));
    tables = [...rest.slice(0, start), ...(end === -1 ? [] : rest.slice(end))];
  }
  const next = `${[...newTop, ...tables].join('\n').replace(/\n+$/, '')}\n\n${block}\n`.replace(/^\n+/, '');
  if (next === text) return { harness: 'codex', file, changed: false, note: null };
  await writeText(file, next);
  return { harness: 'codex', file, changed: true, note: null };
}

/** OpenCode: the Anthropic and OpenAI providers' `baseURL` in `~/.config/opencode/opencode.json`. */
async function opencode(home: string, proxyUrl: string, apiKey: string): Promise<BaseUrlChange> {
  const file = join(home, '.config', 'opencode', 'opencode.json');
  const config = (await readJsonConfig(file)) ?? {};
  const providers = (typeof config.provider === 'object' && config.provider !== null ? config.provider : {}) as Record<string, Record<string, unknown>>;
  const want = (base: string) => ({ baseURL: base, apiKey });
  const next = {
    ...providers,
    anthropic: { ...providers.anthropic, options: { ...(providers.anthropic?.options as object | undefined), ...want(`${proxyUrl}/v1`) } },
    openai: { ...providers.openai, options: { ...(providers.openai?.options as object | undefined), ...want(`${proxyUrl}/v1`) } },
  };
  if (JSON.stringify(next) === JSON.stringify(providers)) return { harness: 'opencode', file, changed: false, note: null };
  await writeJsonConfig(file, { ...config, provider: next });
  return { harness: 'opencode', file, changed: true, note: null };
}

/** Points the harness's model traffic at the proxy, where its base URL lives in a file. */
export async function pointAtProxy(harness: InitHarness, home: string, proxyUrl: string, apiKey: string): Promise<BaseUrlChange> {
  switch (harness) {
    case 'claude-code':
      return claudeCode(home, proxyUrl, apiKey);
    case 'codex':
      return codex(home, proxyUrl);
    case 'opencode':
      return opencode(home, proxyUrl, apiKey);
    case 'cursor':
    case 'windsurf':
    case 'cline':
      return { harness, file: null, changed: false, note: 'its base URL is set in the editor: use the OpenAI base URL override with the proxy address and the workspace key' };
    default:
      return { harness, file: null, changed: false, note: `run it with svc exec, which points it at ${proxyUrl}` };
  }
}
