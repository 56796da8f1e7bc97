import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { ControlPlaneHttpError } from '../config/control-plane-api.js';
import { svcHome } from '../lib/paths.js';
import { readStoredCredentials } from '../machine/credentials.js';
import { readLocalConfig, type LocalConfig } from '../machine/local-config.js';
import { describeFailure, linkedApi } from './control-plane-link.js';

/**
 * `svc budget`: the workspace's spend today and this month against its caps (GET /budget), the
 * local cap from `.svc/config.json`, and active loop runs. The control plane's answer is kept for
 * 30 seconds (seed 002's budget cache) under `$SVC_HOME/cache/`; `--fresh` asks again.
 *
 * Offline (not logged in, the control plane unreachable or failing with a 5xx) only the local cap
 * is reported, with the reason, and the exit code is 0. A refusal (401, 403: a revoked key) exits 1;
 * a `.svc/config.json` that does not read exits 2 naming the file.
 */

export const BUDGET_CACHE_MS = 30_000;

const workspaceBudget = z.object({
  dailyUsd: z.number().nullable(),
  dailyIsDefault: z.boolean(),
  monthlyUsd: z.number().nullable(),
  spentTodayUsd: z.number(),
  spentThisMonthUsd: z.number(),
  dayStart: z.string(),
  monthStart: z.string(),
});
type WorkspaceBudget = z.infer<typeof workspaceBudget>;

const cacheFile = z.object({ fetchedAt: z.number(), budget: workspaceBudget });

/** Loop runs: the control plane has no loop-run store yet, so there is nothing to list and it says so. */
const LOOPS = { available: false, active: [] as unknown[], note: 'the control plane keeps no loop runs yet, so there are no active loops to show' };

interface Report {
  readonly online: boolean;
  /** Why only the local cap is shown: offline, or the control plane refused the key. */
  readonly offlineReason: string | null;
  readonly refused: boolean;
  readonly controlPlaneUrl: string | null;
  readonly workspace: (WorkspaceBudget & { readonly cached: boolean; readonly fetchedAt: string }) | null;
  readonly localCap: { readonly usd: number; readonly source: string | null };
  readonly loops: typeof LOOPS;
}

/** The cache of one control plane and key (its name is a hash of both: another key never reads it). */
function cachePath(env: NodeJS.ProcessEnv, url: string, apiKey: string): string {
  return join(svcHome(env), 'cache', `budget-${createHash('sha256').update(`${url}\u0000${apiKey}`).digest('hex').slice(0, 32)}.json`);
}

async function cachedBudget(file: string, now: number): Promise<{ budget: WorkspaceBudget; fetchedAt: number } | null> {
  try {
    const parsed = cacheFile.safeParse(JSON.parse(await readFile(file, 'utf8')));
    // A time in the future (a clock set back) is not trusted either.
    if (!parsed.success || parsed.data.fetchedAt > now || now - parsed.data.fetchedAt >= BUDGET_CACHE_MS) return null;
    return parsed.data;
  } catch {
    return null;
  }
}

async function storeBudget(file: string, budget: WorkspaceBudget, fetchedAt: number): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, JSON.stringify({ fetchedAt, budget }), { mode: 0o600 });
  await rename(temp, file);
}

const usd = (n: number) => `$${n.toFixed(2)}`;

function render(r: Report): string {
  const lines: string[] = [];
  if (r.workspace === null) lines.push(`${r.refused ? 'refused' : 'offline'}: ${r.offlineReason}; only the local cap is shown`);
  else {
    const w = r.workspace;
    lines.push(`workspace budget (${r.controlPlaneUrl}${w.cached ? `, as of ${w.fetchedAt}` : ''})`);
    lines.push(`  today       ${usd(w.spentTodayUsd)} of ${w.dailyUsd === null ? 'no daily cap' : `${usd(w.dailyUsd)} daily cap${w.dailyIsDefault ? ' (the default: none saved)' : ''}`}`);
    lines.push(`  this month  ${usd(w.spentThisMonthUsd)} of ${w.monthlyUsd === null ? 'no monthly cap' : `${usd(w.monthlyUsd)} monthly cap`}`);
  }
  lines.push(`local cap     ${usd(r.localCap.usd)} (${r.localCap.source ?? 'the default: no .svc/config.json'})`);
  lines.push(`active loops  none: ${r.loops.note}`);
  return `${lines.join('\n')}\n`;
}

export function registerBudgetCommand(program: Command, fail: (err: unknown) => never): void {
  program
    .command('budget')
    .description("the workspace's daily and monthly spend and caps, the local cap (.svc/config.json), active loops; offline, the local cap only")
    .option('--json', 'as JSON', false)
    .option('--fresh', 'ask the control plane even when its answer of the last 30 seconds is cached', false)
    .action(async (opts: { json: boolean; fresh: boolean }) => {
      const env = process.env;
      let local: LocalConfig;
      try {
        local = await readLocalConfig(process.cwd(), env);
      } catch (err) {
        fail(err);
      }
      const base = { controlPlaneUrl: null, workspace: null, localCap: { usd: local.localCapUsd, source: local.source }, loops: LOOPS };
      let report: Report;
      let refused: string | null = null;
      try {
        const { api, url } = linkedApi(env);
        const file = cachePath(env, url, env.SVC_API_KEY || readStoredCredentials(env)?.apiKey || '');
        const now = Date.now();
        let hit = opts.fresh ? null : await cachedBudget(file, now);
        const cached = hit !== null;
        if (hit === null) {
          hit = { budget: workspaceBudget.parse(await api.json('GET', '/budget', undefined, { timeoutMs: 5000 })), fetchedAt: now };
          await storeBudget(file, hit.budget, now).catch(() => undefined);
        }
        report = { ...base, online: true, offlineReason: null, refused: false, controlPlaneUrl: url, workspace: { ...hit.budget, cached, fetchedAt: new Date(hit.fetchedAt).toISOString() } };
      } catch (err) {
        const reason = describeFailure(err);
        // A refusal is not being offline: the key needs fixing.
        if (err instanceof ControlPlaneHttpError && err.status < 500) refused = reason;
        report = { ...base, online: false, offlineReason: reason, refused: refused !== null };
      }
      process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : render(report));
      if (refused !== null) {
        process.stderr.write(`svc budget: ${refused}\n`);
        process.exitCode = 1;
      }
    });
}
