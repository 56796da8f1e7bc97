import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { ControlPlaneApi } from '../config/control-plane-api.js';
import { describeZodError } from '../config/zod-error.js';
import { HOOK_HARNESSES } from '../gate/hook-answer.js';
import { hookHarnessOrExit } from './hook-process.js';
import { runHookCommand } from './gate-hook-command.js';
import { codexRules as compileCodexRules } from '../gate/codex-rules.js';
import { loadSnapshot } from '../gate/snapshot.js';
import { configFileSources, controlPlaneSources, snapshotPath, writeSnapshot } from '../gate/sync.js';
import { ConfigError } from '../lib/errors.js';
import { detectGateHarnesses, GATE_HARNESSES, gateTargets, rewriteGateHooks, type GateChange } from '../machine/gates-install.js';
import { readStoredCredentials } from '../machine/credentials.js';
import { recordManaged } from '../machine/managed-gates.js';

const installFlags = z.object({ harness: z.array(z.enum(GATE_HARNESSES)).min(1).optional(), project: z.string().min(1).optional(), dryRun: z.boolean() });

const syncFlags = z
  .object({
    config: z.string().min(1).optional(),
    controlPlaneUrl: z.url({ protocol: /^https?$/ }).optional(),
    apiKey: z.string().min(1).max(4096).optional(),
    root: z.string().min(1),
    out: z.string().min(1),
  })
  .refine((o) => o.config !== undefined || (o.controlPlaneUrl !== undefined && o.apiKey !== undefined), {
    message: 'give --config <file>, or a control plane (--control-plane-url and --api-key, SVC_CONTROL_PLANE_URL and SVC_API_KEY, or svc login)',
  });

function report(changes: readonly GateChange[], mode: 'install' | 'uninstall', dryRun: boolean): string {
  if (changes.length === 0) return 'no harness found (name one with --harness)\n';
  return changes
    .map((c) => {
      if (c.error !== null) return `${c.harness} ${c.file}: left untouched: ${c.error}`;
      if (!c.changed) return `${c.harness} ${c.file}: ${mode === 'install' ? 'the gate is already there' : 'no gate to remove'}`;
      const verb = mode === 'install' ? (dryRun ? 'would add' : 'added') : dryRun ? 'would remove' : 'removed';
      return `${c.harness} ${c.file}: ${verb} the gate${c.backup !== null && !dryRun ? ` (original kept in ${c.backup})` : ''}`;
    })
    .join('\n')
    .concat('\n');
}

/** `svc gate hook <harness>` and `svc gates install|uninstall|sync`. */
export function registerGateCommands(program: Command, fail: (err: unknown) => never): void {
  program
    .command('gate')
    .description('the pre-execution gate')
    .command('hook')
    .description(`run the gate as a harness's pre-tool hook: the call on stdin, the answer in the harness's hook protocol (${HOOK_HARNESSES.join(', ')})`)
    .argument('<harness>', HOOK_HARNESSES.join(' or '))
    .action((harness: string) => runHookCommand(hookHarnessOrExit(harness)));

  const gates = program.command('gates').description("the gate hooks of this machine's harnesses and the policy snapshot they read");
  for (const mode of ['install', 'uninstall'] as const) {
    gates
      .command(mode)
      .description(
        mode === 'install'
          ? "write the gate into each detected harness (Claude Code PreToolUse, Cursor beforeShellExecution and beforeMCPExecution hooks, Codex exec-policy rules from the snapshot); no login needed; a backup of each file is kept"
          : 'take the gate hook out again (the backup itself when nothing else changed)',
      )
      .option('--harness <names...>', `only these: ${GATE_HARNESSES.join(', ')} (default: the ones found)`)
      .option('--project <dir>', "a project's own hook files (.claude/settings.json, .cursor/hooks.json) instead of the user's")
      .option('--dry-run', 'say what would change, change nothing', false)
      .action(async (opts: { harness?: string[]; project?: string; dryRun: boolean }) => {
        const parsed = installFlags.safeParse(opts);
        if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
        try {
          const home = process.env.HOME || homedir();
          const harnesses = parsed.data.harness ?? detectGateHarnesses(home);
          const codexRules = async () => {
            const snapshot = await loadSnapshot(snapshotPath(process.env), process.env.SVC_WORKSPACE_ID ?? '');
            return snapshot.trusted ? { rules: compileCodexRules(snapshot) } : { problem: `Codex rules are compiled from the policy snapshot, and ${snapshot.problem}: run svc gates sync first` };
          };
          const targets = gateTargets(home, harnesses, parsed.data.project === undefined ? undefined : resolve(parsed.data.project));
          const changes = await rewriteGateHooks(targets, mode, { dryRun: parsed.data.dryRun, codexRules });
          if (!parsed.data.dryRun) await recordManaged(process.env, targets.filter((t) => changes.some((c) => c.file === t.file && c.error === null)), mode);
          process.stdout.write(report(changes, mode, parsed.data.dryRun));
          if (changes.some((c) => c.error !== null)) process.exitCode = 1;
        } catch (err) {
          fail(err);
        }
      });
  }
  gates
    .command('sync')
    .description('compile the policy snapshot the gates read ($SVC_HOME/hooks/policy-snapshot.rules) from the control plane, or from a local config file')
    .option('--config <file>', 'compile from this proxy config file instead of the control plane (SVC_CONFIG)')
    .option('--control-plane-url <url>', 'the control plane (SVC_CONTROL_PLANE_URL, else the one svc login stored)')
    .option('--api-key <key>', 'the key to read it with (SVC_API_KEY, else the one svc login stored)')
    .option('--root <dir>', 'the folder whose .svc/sops/ holds SOP rules and decide rules', '.')
    .option('--out <file>', 'where to write the snapshot (default $SVC_HOME/hooks/policy-snapshot.rules)')
    .action(async (opts: Record<string, string | undefined>) => {
      const env = process.env;
      const stored = readStoredCredentials(env);
      const parsed = syncFlags.safeParse({
        config: opts.config ?? (env.SVC_CONFIG || undefined),
        controlPlaneUrl: opts.controlPlaneUrl ?? (env.SVC_CONTROL_PLANE_URL || stored?.controlPlaneUrl),
        apiKey: opts.apiKey ?? (env.SVC_API_KEY || stored?.apiKey),
        root: opts.root,
        out: opts.out ?? snapshotPath(env),
      });
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const { config, controlPlaneUrl, apiKey, root, out } = parsed.data;
      try {
        const sources = config !== undefined ? await configFileSources(config) : await controlPlaneSources(new ControlPlaneApi({ controlPlaneUrl: controlPlaneUrl!, apiKey: apiKey! }));
        const written = await writeSnapshot({ ...sources, root: resolve(root), env }, out);
        process.stdout.write(`svc gates sync: wrote ${written.path} for workspace ${sources.workspaceId} (${written.rules} SOP rule(s))\n`);
      } catch (err) {
        fail(err);
      }
    });
}
