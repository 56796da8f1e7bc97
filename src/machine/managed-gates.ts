import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { svcHome } from '../lib/paths.js';
import { GATE_HARNESSES, gateFileState, rewriteGateHooks, type GateHarness, type GateTarget } from './gates-install.js';

/**
 * The harness files whose gate svc installed (`$SVC_HOME/gates/managed.json`), so the sync daemon can
 * tell a hand-edited one (seed 001 bypassEnforcementTier) from one the user never had.
 */

const managedSchema = z.array(z.strictObject({ harness: z.enum(GATE_HARNESSES), file: z.string().min(1) }));

export function managedPath(env: NodeJS.ProcessEnv): string {
  return join(svcHome(env), 'gates', 'managed.json');
}

export async function readManaged(env: NodeJS.ProcessEnv): Promise<GateTarget[]> {
  try {
    return managedSchema.parse(JSON.parse(await readFile(managedPath(env), 'utf8')));
  } catch {
    return [];
  }
}

/** Records the files install wrote a gate into, and forgets those uninstall took it out of. */
export async function recordManaged(env: NodeJS.ProcessEnv, targets: readonly GateTarget[], mode: 'install' | 'uninstall'): Promise<void> {
  const current = await readManaged(env);
  const key = (t: GateTarget) => `${t.harness}\u0000${t.file}`;
  const byKey = new Map(current.map((t) => [key(t), t]));
  for (const t of targets) {
    if (mode === 'install') byKey.set(key(t), { harness: t.harness, file: t.file });
    else byKey.delete(key(t));
  }
  await mkdir(dirname(managedPath(env)), { recursive: true, mode: 0o700 });
  await writeFile(managedPath(env), `${JSON.stringify([...byKey.values()], null, 2)}\n`, { mode: 0o600 });
}

export interface Tampered {
  readonly harness: GateHarness;
  readonly file: string;
  /** What was done: restored, restored and write-protected, or only recorded. */
  readonly reaction: 'restored' | 'write-protected' | 'recorded';
  readonly detail: string | null;
}

/**
 * Each managed file whose gate was taken out by hand, handled as bypassEnforcementTier says:
 * `rewrite` puts the gate back, `immutable` also sets the platform's immutable flag (`chattr +i`,
 * which needs root), `alert-only` changes nothing; the caller records an incident for every one.
 */
export async function enforceManagedGates(
  env: NodeJS.ProcessEnv,
  tier: 'rewrite' | 'immutable' | 'alert-only',
  codexRules: () => Promise<{ rules: string } | { problem: string }>,
): Promise<Tampered[]> {
  const out: Tampered[] = [];
  for (const target of await readManaged(env)) {
    if ((await gateFileState(target)).installed) continue;
    if (tier === 'alert-only') {
      out.push({ ...target, reaction: 'recorded', detail: null });
      continue;
    }
    const [change] = await rewriteGateHooks([target], 'install', { dryRun: false, codexRules });
    if (change?.error) {
      out.push({ ...target, reaction: 'recorded', detail: `could not restore it: ${change.error}` });
      continue;
    }
    if (tier === 'immutable') {
      const chattr = spawnSync('chattr', ['+i', target.file], { encoding: 'utf8' });
      out.push({ ...target, reaction: chattr.status === 0 ? 'write-protected' : 'restored', detail: chattr.status === 0 ? null : `restored; chattr +i failed: ${(chattr.stderr || chattr.error?.message || '').trim()}` });
    } else out.push({ ...target, reaction: 'restored', detail: null });
  }
  return out;
}
