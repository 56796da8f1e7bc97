import type { Command } from 'commander';
import { z } from 'zod';
import { ControlPlaneApi } from '../config/control-plane-api.js';
import { describeZodError } from '../config/zod-error.js';
import type { WorkspaceSettings } from '../config/settings.js';
import { ConfigError } from '../lib/errors.js';
import { svcHome } from '../lib/paths.js';
import { readStoredCredentials } from '../machine/credentials.js';
import { PROXY_URL, proxyEnvironment, runChild, sandboxVerdict } from '../machine/exec.js';
import { resolveSandbox, SANDBOX_KINDS, sandboxed } from '../machine/sandbox.js';
import { loadMcpSettings } from '../mcp/settings-source.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

const execFlags = z.object({
  sandbox: z.union([z.literal(false), z.literal('auto'), z.enum(SANDBOX_KINDS)]),
  sandboxImage: z.string().min(1).max(512),
  sandboxMemory: z.string().regex(/^\d+[bkmg]?$/i, 'a size such as 2g or 512m'),
  sandboxCpus: z.coerce.number().positive().max(512),
  sandboxPids: z.coerce.number().int().min(1).max(1_000_000),
  proxyUrl: z.url({ protocol: /^https?$/ }),
});

/** The workspace's sandboxRequirement: from the control plane, else the last synced config; undefined when neither answers. */
async function sandboxRequirement(env: NodeJS.ProcessEnv, apiKey: string, url: string | undefined): Promise<WorkspaceSettings['sandboxRequirement'] | null> {
  if (url !== undefined) {
    try {
      const answer = await new ControlPlaneApi({ controlPlaneUrl: url, apiKey, timeoutMs: 3000 }).json<{ settings: WorkspaceSettings }>('GET', '/workspace/settings');
      return answer.settings.sandboxRequirement ?? 'off';
    } catch {
      // The synced config below.
    }
  }
  const synced = await loadMcpSettings({ configFile: undefined, home: svcHome(env) });
  return synced.ok ? (synced.config.settings.sandboxRequirement ?? 'off') : null;
}

export function registerExecCommand(program: Command, fail: (err: unknown) => never): void {
  program
    .command('exec')
    .description('run a command pointed at the local proxy (OPENAI_*/ANTHROPIC_* base URLs and keys), optionally in a sandbox; exits with its code')
    .option('--sandbox [kind]', `run it confined: ${SANDBOX_KINDS.join(' or ')} (default: oci when podman or docker is installed, else bwrap)`)
    .option('--sandbox-image <image>', 'the OCI image', 'svc/sandbox:latest')
    .option('--sandbox-memory <size>', 'memory limit (OCI)', '2g')
    .option('--sandbox-cpus <n>', 'CPU limit (OCI)', '2')
    .option('--sandbox-pids <n>', 'process limit (OCI)', '512')
    .option('--sandbox-allow <cidrs>', 'networks the sandbox may reach (not enforced yet: refused)')
    .option('--proxy-url <url>', 'the proxy', PROXY_URL)
    .argument('<command...>', 'the command and its arguments (after --)')
    .action(async (command: string[], opts: Record<string, string | boolean | undefined>) => {
      const env = process.env;
      if (opts.sandboxAllow !== undefined) fail(new ConfigError('--sandbox-allow is not enforced by either sandbox kind yet; leave it out'));
      const parsed = execFlags.safeParse({
        sandbox: opts.sandbox === undefined ? false : opts.sandbox === true ? 'auto' : opts.sandbox,
        sandboxImage: opts.sandboxImage,
        sandboxMemory: opts.sandboxMemory,
        sandboxCpus: opts.sandboxCpus,
        sandboxPids: opts.sandboxPids,
        proxyUrl: opts.proxyUrl,
      });
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const flags = parsed.data;
      const stored = readStoredCredentials(env);
      const apiKey = env.SVC_API_KEY || stored?.apiKey;
      if (!apiKey) {
        process.stderr.write('svc exec: not logged in: run svc login (or set SVC_API_KEY)\n');
        process.exit(1);
      }
      const requirement = await sandboxRequirement(env, apiKey, env.SVC_CONTROL_PLANE_URL || stored?.controlPlaneUrl);
      if (requirement === null) process.stderr.write('svc exec: the workspace\'s sandboxRequirement could not be read (no control plane answered, no synced config); read as off\n');
      const verdict = sandboxVerdict(requirement ?? 'off', flags.sandbox !== false);
      if (verdict.warning !== null) process.stderr.write(`svc exec: ${verdict.warning}\n`);
      if (!verdict.run) process.exit(1);
      const injected = proxyEnvironment(apiKey, withoutTrailingSlashes(flags.proxyUrl));
      const childEnv = { ...env, ...injected };
      let argv = command;
      if (flags.sandbox !== false) {
        const resolved = resolveSandbox(flags.sandbox);
        if ('problem' in resolved) {
          process.stderr.write(`svc exec: --sandbox: ${resolved.problem}\n`);
          process.exit(1);
        }
        argv = sandboxed(resolved, { kind: flags.sandbox, image: flags.sandboxImage, memory: flags.sandboxMemory, cpus: flags.sandboxCpus, pids: flags.sandboxPids }, command, process.cwd(), injected);
      }
      try {
        process.exit(await runChild(argv, childEnv, process.cwd()));
      } catch (err) {
        fail(err);
      }
    });
}
