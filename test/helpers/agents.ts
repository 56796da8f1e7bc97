import { existsSync } from 'node:fs';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TraceRecord } from '../../src/traces/trace.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

const BIN = fileURLToPath(new URL('../../node_modules/.bin/', import.meta.url));
export const CLAUDE = join(BIN, 'claude');
export const CODEX = join(BIN, 'codex');

/** Bound on one harness run: generous, since a loaded CI machine is slow; the run normally takes seconds. */
const RUN_TIMEOUT_MS = 180_000;

/** Variables of the test's own environment that would point a harness elsewhere or change how it behaves. */
const LEAKY = /^(ANTHROPIC_|OPENAI_|CLAUDE_|CODEX_|SVC_)/;

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What a run printed, shortened for an assertion message. */
export function outcome(run: AgentRun): string {
  return `exit ${run.code}; stdout: ${run.stdout.slice(-400)}; stderr: ${run.stderr.slice(-400)}`;
}

/**
 * A temp folder for one harness run: `home` (its HOME), `work` (its working directory) and room for
 * anything else a test needs (a bare remote). Removed when the test ends.
 */
/**
 * Where agent sandboxes live: outside /tmp, because Codex's Linux sandbox (bubblewrap, when the
 * machine has it) gives the command a private /tmp, and a work dir under /tmp would vanish there.
 */
const AGENT_BASE = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();

export async function agentSandbox(t: Teardown): Promise<{ root: string; home: string; work: string }> {
  const root = await mkdtemp(join(AGENT_BASE, 'svc-agent-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const work = join(root, 'work');
  await mkdir(home);
  await mkdir(work);
  return { root, home, work };
}

function harnessEnv(home: string, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!LEAKY.test(k)) env[k] = v;
  return { ...env, HOME: home, NO_COLOR: '1', ...extra };
}

/** Runs a harness binary to completion (or kills it at the bound) and collects what it printed. */
async function run(t: Teardown, bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<AgentRun> {
  const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = once(child, 'exit');
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const [code] = (await exited) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** `claude -p <prompt>` through `baseUrl` with an API key, Bash allowed without asking. */
export function runClaudeCode(
  t: Teardown,
  opts: { baseUrl: string; apiKey: string; home: string; cwd: string; prompt: string; args?: string[]; env?: NodeJS.ProcessEnv },
): Promise<AgentRun> {
  const env = harnessEnv(opts.home, {
    ...opts.env,
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ANTHROPIC_API_KEY: opts.apiKey,
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  });
  return run(t, CLAUDE, ['-p', opts.prompt, '--allowedTools', 'Bash', ...(opts.args ?? [])], opts.cwd, env);
}

/**
 * `codex exec <prompt>` with a model provider whose base URL is `baseUrl` (the proxy's `/v1`), its
 * Responses wire, and the key in its `env_key`. Without `model`, Codex's own default (code mode).
 * The workspace-write sandbox lets commands write in the working directory and the temp folder.
 */
export async function runCodex(
  t: Teardown,
  opts: { baseUrl: string; apiKey: string; home: string; cwd: string; prompt: string; model?: string },
): Promise<AgentRun> {
  const codexHome = join(opts.home, '.codex');
  await mkdir(codexHome, { recursive: true });
  await writeFile(
    join(codexHome, 'config.toml'),
    [
      'model_provider = "svc"',
      '[model_providers.svc]',
      'name = "svc"',
      `base_url = "${opts.baseUrl}"`,
      'env_key = "SVC_AGENT_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  const env = harnessEnv(opts.home, { CODEX_HOME: codexHome, SVC_AGENT_KEY: opts.apiKey });
  const model = opts.model === undefined ? [] : ['-m', opts.model];
  return run(t, CODEX, ['exec', '--skip-git-repo-check', '-s', 'workspace-write', ...model, opts.prompt], opts.cwd, env);
}

const git = (cwd: string, ...args: string[]) => promisify(execFile)('git', args, { cwd });

/**
 * A clone in `work` of a bare repository under `root`, with `main` pushed, then rewritten locally so
 * only a forced push would move the remote's `main`.
 */
export async function divergedClone(root: string, work: string): Promise<{ remoteMain(): Promise<string>; localMain(): Promise<string> }> {
  const remote = join(root, 'remote.git');
  await git(root, 'init', '-q', '--bare', '-b', 'main', remote);
  await git(work, 'init', '-q', '-b', 'main');
  await git(work, 'config', 'user.email', 'agent@example.com');
  await git(work, 'config', 'user.name', 'Agent');
  await git(work, 'remote', 'add', 'origin', remote);
  await writeFile(join(work, 'notes.txt'), 'first\n');
  await git(work, 'add', 'notes.txt');
  await git(work, 'commit', '-q', '-m', 'first');
  await git(work, 'push', '-q', 'origin', 'main');
  await writeFile(join(work, 'notes.txt'), 'rewritten\n');
  await git(work, 'commit', '-q', '--amend', '-a', '-m', 'rewritten');
  const rev = async (cwd: string, ref: string) => (await git(cwd, 'rev-parse', ref)).stdout.trim();
  return { remoteMain: () => rev(remote, 'main'), localMain: () => rev(work, 'main') };
}

/** The traces a spawned proxy wrote under its SVC_HOME. */
export async function proxyTraces(svcHome: string): Promise<TraceRecord[]> {
  const text = await readFile(join(svcHome, 'traces', 'traces.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TraceRecord);
}
