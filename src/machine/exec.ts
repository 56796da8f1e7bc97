import { spawn } from 'node:child_process';
import type { WorkspaceSettings } from '../config/settings.js';

/** The local proxy's address `svc exec` points a command at (seed 002: local port 4000). */
export const PROXY_URL = 'http://127.0.0.1:4000';

/**
 * The variables that point a harness or SDK at the local proxy: the four OpenAI base-URL names the
 * SDKs and tools read, Anthropic's, and the three API-key variables (OpenAI, Anthropic, svc's own),
 * all holding the workspace key.
 */
export function proxyEnvironment(apiKey: string, proxyUrl = PROXY_URL): Record<string, string> {
  const v1 = `${proxyUrl}/v1`;
  return {
    OPENAI_API_BASE: v1,
    OPENAI_BASE_URL: v1,
    OPENAI_API_BASE_URL: v1,
    OPENAI_HOST: proxyUrl,
    ANTHROPIC_BASE_URL: proxyUrl,
    OPENAI_API_KEY: apiKey,
    ANTHROPIC_API_KEY: apiKey,
    SVC_API_KEY: apiKey,
  };
}

/** sandboxRequirement (seed 001): require refuses an unsandboxed run, warn warns. */
export function sandboxVerdict(requirement: WorkspaceSettings['sandboxRequirement'], sandboxed: boolean): { run: boolean; warning: string | null } {
  if (sandboxed || requirement === undefined || requirement === 'off') return { run: true, warning: null };
  if (requirement === 'require') return { run: false, warning: 'the workspace requires a sandbox (sandboxRequirement: require): run it with --sandbox' };
  return { run: true, warning: 'the workspace asks for a sandbox (sandboxRequirement: warn) and this command runs without one' };
}

/**
 * Runs the command with `env`, passing SIGINT, SIGTERM and SIGHUP on; resolves with its exit code
 * (128 + the signal's number when a signal ended it), or 127 when it cannot be started.
 */
export function runChild(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, cwd, stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const s of signals) process.on(s, forward);
    const done = (code: number) => {
      for (const s of signals) process.off(s, forward);
      resolve(code);
    };
    child.once('error', (err) => {
      process.stderr.write(`svc exec: cannot run ${argv[0]}: ${err.message}\n`);
      done(127);
    });
    child.once('exit', (code, signal) => {
      const numbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
      done(code ?? 128 + (signal === null ? 0 : (numbers[signal] ?? 0)));
    });
  });
}
