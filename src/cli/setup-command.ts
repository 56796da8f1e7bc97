import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { confirm, input, password, select } from '@inquirer/prompts';
import type { Command } from 'commander';
import { request } from 'undici';
import { z } from 'zod';
import { ControlPlaneHttpError } from '../config/control-plane-api.js';
import { describeZodError } from '../config/zod-error.js';
import { verifyCredential, type VerifyResult } from '../controlplane/credentials/verify.js';
import { UpstreamGuard } from '../controlplane/credentials/egress.js';
import { DEFAULT_CONTROL_PLANE_URL } from '../gate/client.js';
import { ConfigError } from '../lib/errors.js';
import { svcHome } from '../lib/paths.js';
import { readStoredCredentials } from '../machine/credentials.js';
import { PROXY_URL } from '../machine/exec.js';
import { detectHarnesses } from '../machine/harness-config.js';
import { PROVIDERS, type ProviderId } from '../upstream/providers.js';
import { initFlags, initMachine } from './init-command.js';
import { readSecretFromStdin } from './stdin.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

/** Providers whose credential is one API key (the wizard's choice; the others are set with the control plane's credentials routes). */
const KEY_PROVIDERS = ['openai', 'anthropic', 'gemini', 'mistral', 'groq', 'deepseek', 'xai'] as const satisfies readonly ProviderId[];
type KeyProvider = (typeof KEY_PROVIDERS)[number];

const setupFlags = z.object({
  mode: z.enum(['connected', 'local']).optional(),
  provider: z.enum(KEY_PROVIDERS).optional(),
  providerKeyStdin: z.boolean(),
  providerBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
  yes: z.boolean(),
  judgeUrl: z.url({ protocol: /^https?$/ }).optional(),
  judgeModel: z.string().min(1).max(256).optional(),
});

/** What to tell the user about a verification, and whether saving needs their confirmation (401/403 does; 429 and unreachable do not block). */
function judgeVerification(v: VerifyResult): { line: string; confirm: boolean } {
  if (v.verified) return { line: `verified: ${v.message}`, confirm: false };
  if (v.status === 401 || v.status === 403) return { line: `the provider rejected the key (${v.status})`, confirm: true };
  if (v.status === 429) return { line: 'the provider is rate-limiting: the key was not checked, saved anyway', confirm: false };
  return { line: `not verified (${v.message}), saved anyway`, confirm: false };
}

/**
 * `svc setup`: the interactive wizard (`@inquirer/prompts`); every answer can be given as a flag so it
 * runs unattended. Connected mode is `svc init` plus the provider credential saved in the workspace;
 * local mode writes `.svc.env` for a proxy with no control plane.
 */
export function registerSetupCommand(program: Command, fail: (err: unknown) => never): void {
  program
    .command('setup')
    .description('the setup wizard: harnesses found, connected or local mode, a provider and its key (verified against the provider), optionally a judge model')
    .option('--mode <mode>', 'connected (a control plane) or local (writes .svc.env)')
    .option('--provider <id>', KEY_PROVIDERS.join(', '))
    .option('--provider-key-stdin', 'read the provider key from stdin', false)
    .option('--provider-base-url <url>', 'verify against this base URL instead of the provider\'s own (a gateway in between, a test double)')
    .option('--yes', 'save a key the provider rejected without asking', false)
    .option('--judge-url <url>', 'a self-hosted judge model server (OpenAI-compatible) for decide rules')
    .option('--judge-model <name>', 'its model')
    .option('--api-key <key>', 'connected mode: join the workspace of this key')
    .option('--control-plane-url <url>', `connected mode: the control plane (default ${DEFAULT_CONTROL_PLANE_URL})`)
    .option('--project <dir>', 'the project whose MCP configs are wrapped too', '.')
    .action(async (opts: Record<string, unknown>) => {
      const env = process.env;
      const parsed = setupFlags.safeParse(opts);
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const f = parsed.data;
      const interactive = process.stdin.isTTY === true && !f.providerKeyStdin;
      const need = <T>(value: T | undefined, what: string, ask: () => Promise<T>): Promise<T> => {
        if (value !== undefined) return Promise.resolve(value);
        if (!interactive) throw new ConfigError(`${what} is needed: give it as a flag (no terminal to ask on)`);
        return ask();
      };
      const lines: string[] = [];
      try {
        const home = env.HOME || process.cwd();
        const found = detectHarnesses(home);
        lines.push(`harnesses found: ${found.length === 0 ? 'none' : found.join(', ')}`);
        const mode = await need(f.mode, '--mode', () =>
          select({ message: 'Mode', choices: [{ name: 'connected: a control plane governs this machine', value: 'connected' as const }, { name: 'local: a proxy on this machine, no control plane', value: 'local' as const }] }),
        );
        const provider: KeyProvider = await need(f.provider, '--provider', () => select({ message: 'Model provider', choices: KEY_PROVIDERS.map((p) => ({ name: p, value: p })) }));
        const key = f.providerKeyStdin ? (await readSecretFromStdin()).trim() : await need<string>(undefined, '--provider-key-stdin', () => password({ message: `${provider} API key`, mask: '*' }));
        if (key === '') throw new ConfigError('the provider key is empty');

        const guard = new UpstreamGuard(false);
        const verification = judgeVerification(await verifyCredential(provider, { apiKey: key }, { baseUrlOverride: f.providerBaseUrl, guard }));
        await guard.close();
        lines.push(`${provider}: ${verification.line}`);
        if (verification.confirm && !f.yes) {
          const save = interactive ? await confirm({ message: 'The provider rejected the key. Save it anyway?', default: false }) : false;
          if (!save) throw new ConfigError(`${provider} rejected the key; nothing was saved (--yes saves it anyway)`);
        }

        if (mode === 'local') {
          const envVar = PROVIDERS[provider].envKeys[0] ?? `${provider.toUpperCase()}_API_KEY`;
          const file = join(resolve('.'), '.svc.env');
          await writeFile(
            file,
            [
              '# svc local mode: load it (set -a; . ./.svc.env; set +a), run `svc proxy`, then your harness.',
              `${envVar}=${key}`,
              `ANTHROPIC_BASE_URL=${PROXY_URL}`,
              `OPENAI_BASE_URL=${PROXY_URL}/v1`,
              'SVC_PROXY_PORT=4000',
              '',
            ].join('\n'),
            { mode: 0o600 },
          );
          lines.push(`local mode: wrote ${file} (mode 0600)`);
        } else {
          const stored = readStoredCredentials(env);
          const init = initFlags.parse({
            controlPlaneUrl: opts.controlPlaneUrl ?? (env.SVC_CONTROL_PLANE_URL || stored?.controlPlaneUrl || DEFAULT_CONTROL_PLANE_URL),
            apiKey: opts.apiKey,
            passwordStdin: false,
            project: opts.project ?? '.',
            proxyUrl: PROXY_URL,
          });
          const { api } = await initMachine(init, env, lines);
          try {
            await api.json('PUT', `/workspace/provider-credentials/${provider}`, { fields: { apiKey: key } });
            lines.push(`${provider}: the key is saved in the workspace (the proxy gets it with its config)`);
          } catch (err) {
            lines.push(`${provider}: the key could not be saved in the workspace (${err instanceof ControlPlaneHttpError && err.status === 403 ? 'an OWNER or ADMIN saves provider keys' : (err as Error).message})`);
          }
        }

        const judgeUrl = f.judgeUrl ?? (interactive && (await confirm({ message: 'Set up a self-hosted judge model for decide rules?', default: false })) ? await input({ message: 'Judge model server URL (OpenAI-compatible)' }) : undefined);
        if (judgeUrl !== undefined) {
          const model = await need(f.judgeModel, '--judge-model', () => input({ message: 'Judge model name' }));
          const dir = join(svcHome(env), 'decide');
          await mkdir(dir, { recursive: true, mode: 0o700 });
          await writeFile(join(dir, 'engine.json'), `${JSON.stringify({ url: judgeUrl, model }, null, 2)}\n`, { mode: 0o600 });
          const probe = await request(`${withoutTrailingSlashes(judgeUrl)}/models`, { headersTimeout: 5000, bodyTimeout: 5000 }).then(
            async (res) => (await res.body.dump(), res.statusCode),
            () => null,
          );
          lines.push(`judge: ${join(dir, 'engine.json')} (${model}); ${probe === 200 ? 'the server answers' : `the server did not answer (${probe ?? 'unreachable'}): check it, then svc decide eval`}`);
        }
        process.stdout.write(`${lines.join('\n')}\n`);
      } catch (err) {
        process.stdout.write(lines.length > 0 ? `${lines.join('\n')}\n` : '');
        process.stderr.write(`svc setup: ${(err as Error).message}\n`);
        process.exit(1);
      }
    });
}
