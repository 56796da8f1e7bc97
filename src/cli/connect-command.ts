import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { describeZodError } from '../config/zod-error.js';
import { controlPlaneSources, snapshotPath, writeSnapshot } from '../gate/sync.js';
import { ConfigError } from '../lib/errors.js';
import { describeFailure, linkedApi } from './control-plane-link.js';
import { collectInventory } from '../machine/inventory.js';
import { enforceManagedGates } from '../machine/managed-gates.js';
import { codexRules } from '../gate/codex-rules.js';
import { loadSnapshot } from '../gate/snapshot.js';
import { drainEvents, eventLogPath } from '../gate/event-log.js';

/** Inventory goes out when connect starts and on every tenth poll (five minutes at the default interval). */
const INVENTORY_EVERY = 10;

const VIEWS = ['summary', 'devices', 'harnesses', 'mcp-servers', 'skills', 'disconnects'] as const;

export function registerConnectCommands(program: Command, fail: (err: unknown) => never): void {
  program
    .command('connect')
    .description("the sync daemon in the foreground: every --interval, compile the policy snapshot from the control plane; send this machine's inventory at start and every tenth poll")
    .option('--interval <ms>', 'poll interval', '30000')
    .option('--root <dir>', 'the connected workspace folder (its .svc/sops/ rules and skills)', '.')
    .option('--once', 'one poll (snapshot and inventory), then exit', false)
    .action(async (opts: { interval: string; root: string; once: boolean }) => {
      const env = process.env;
      const interval = z.coerce.number().int().min(1000).max(86_400_000).safeParse(opts.interval);
      if (!interval.success) fail(new ConfigError(`invalid option: --interval: ${describeZodError(interval.error)}`));
      let link: ReturnType<typeof linkedApi>;
      try {
        link = linkedApi(env);
      } catch (err) {
        fail(err);
      }
      const home = env.HOME || homedir();
      const root = resolve(opts.root);
      let polls = 0;
      const captureEvery = Math.max(1, Number(env.CONFIG_CAPTURE_INTERVAL) || 5);
      /** Managed harness files whose gate was taken out by hand: restored, write-protected or only recorded, and an incident either way. */
      const enforceGates = async (tier: 'rewrite' | 'immutable' | 'alert-only', workspaceId: string) => {
        const codex = async () => ({ rules: codexRules(await loadSnapshot(snapshotPath(env), workspaceId)) });
        const tampered = await enforceManagedGates(env, tier, codex);
        if (tampered.length === 0) return;
        for (const t of tampered) process.stderr.write(`svc connect: the gate was taken out of ${t.file} (${t.harness}): ${t.reaction}${t.detail === null ? '' : `, ${t.detail}`}\n`);
        const events = tampered.map((t) => ({
          eventId: randomUUID(),
          type: 'gate_tampered',
          gateSource: 'sync_daemon',
          harness: t.harness,
          code: 'GATE_TAMPERED',
          rule: 'bypassEnforcementTier',
          reason: `the gate was taken out of ${relative(home, t.file)} by hand; ${t.reaction} (bypassEnforcementTier: ${tier})`,
        }));
        await link.api.call('POST', '/hook-events', { events }).catch((err: unknown) => process.stderr.write(`svc connect: the tampering could not be reported (${describeFailure(err)})\n`));
      };
      const poll = async (): Promise<boolean> => {
        let ok = true;
        try {
          const sources = await controlPlaneSources(link.api);
          const written = await writeSnapshot({ ...sources, root, env }, snapshotPath(env));
          process.stdout.write(`svc connect: snapshot ${written.path}${written.changed ? '' : ' (unchanged)'}\n`);
          await enforceGates(sources.settings.bypassEnforcementTier ?? 'rewrite', sources.workspaceId);
        } catch (err) {
          ok = false;
          process.stderr.write(`svc connect: the snapshot was not updated (${describeFailure(err)}); the gates keep the last one\n`);
        }
        try {
          const drained = await drainEvents(eventLogPath(env), async (events) => void (await link.api.call('POST', '/hook-events', { events })));
          if (drained.sent + drained.left > 0) process.stdout.write(`svc connect: ${drained.sent} logged gate event(s) sent${drained.left > 0 ? `, ${drained.left} kept for the next poll` : ''}\n`);
        } catch (err) {
          process.stderr.write(`svc connect: the hook-event log could not be read (${(err as Error).message})\n`);
        }
        // FF_CONFIG_CAPTURE: harness config files hashed every CONFIG_CAPTURE_INTERVAL polls (default 5) and sent with an inventory report.
        const capture = env.FF_CONFIG_CAPTURE === 'true' && polls % captureEvery === 0;
        if (polls % INVENTORY_EVERY === 0 || capture) {
          try {
            const sent = await link.api.json<{ id: string }>('POST', '/devices/report', await collectInventory({ home, workspace: root, env, captureConfigs: capture }));
            process.stdout.write(`svc connect: inventory sent (device ${sent.id})\n`);
          } catch (err) {
            ok = false;
            process.stderr.write(`svc connect: the inventory was not sent (${describeFailure(err)})\n`);
          }
        }
        polls++;
        return ok;
      };
      if (opts.once) process.exit((await poll()) ? 0 : 1);
      process.stdout.write(`svc connect: syncing with ${link.url} every ${interval.data} ms (Ctrl-C stops)\n`);
      await poll();
      const timer = setInterval(() => void poll(), interval.data);
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (clearInterval(timer), process.exit(0)));
    });

  program
    .command('disconnect')
    .description('tell the control plane this machine (or one harness) leaves governance; it reads as Disconnected until its next report')
    .option('--harness <name>', 'only this harness')
    .option('--reason <text>', 'why')
    .option('--root <dir>', 'the connected workspace folder', '.')
    .action(async (opts: { harness?: string; reason?: string; root: string }) => {
      const env = process.env;
      try {
        const { api } = linkedApi(env);
        const report = await collectInventory({ home: env.HOME || homedir(), workspace: resolve(opts.root), env, disconnect: { harness: opts.harness ?? null, reason: opts.reason ?? null } });
        await api.json('POST', '/devices/report', report);
        process.stdout.write(`svc disconnect: ${opts.harness === undefined ? 'this machine' : opts.harness} reported disconnected\n`);
      } catch (err) {
        process.stderr.write(`svc disconnect: ${describeFailure(err)}\n`);
        process.exit(1);
      }
    });

  program
    .command('inventory')
    .description(`the device inventory: ${VIEWS.join(', ')}`)
    .argument('<view>', VIEWS.join(' | '))
    .option('--csv', 'as CSV (harnesses, mcp-servers)', false)
    .option('--json', 'as JSON', false)
    .option('--status <status>', 'only this status (harnesses, mcp-servers)')
    .option('--harness <type>', 'only this harness (harnesses, mcp-servers)')
    .action(async (view: string, opts: { csv: boolean; json: boolean; status?: string; harness?: string }) => {
      if (!(VIEWS as readonly string[]).includes(view)) fail(new ConfigError(`unknown view '${view}': ${VIEWS.join(', ')}`));
      if (opts.csv && view !== 'harnesses' && view !== 'mcp-servers') fail(new ConfigError('--csv is for harnesses and mcp-servers'));
      try {
        const { api } = linkedApi(process.env);
        const query = new URLSearchParams({ ...(opts.csv ? { format: 'csv' } : {}), ...(opts.status ? { status: opts.status } : {}), ...(opts.harness ? { harness: opts.harness } : {}) });
        const answer = await api.call('GET', `/inventory/${view}${query.size > 0 ? `?${query}` : ''}`);
        if (opts.csv || opts.json) {
          process.stdout.write(opts.csv ? answer.text : `${answer.text}\n`);
          return;
        }
        const body = JSON.parse(answer.text) as Record<string, unknown>;
        const rows = Object.values(body).find(Array.isArray) as Array<Record<string, unknown>> | undefined;
        if (rows === undefined) process.stdout.write(`${Object.entries(body).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join('\n')}\n`);
        else if (rows.length === 0) process.stdout.write('none\n');
        else process.stdout.write(`${rows.map((r) => Object.entries(r).filter(([, v]) => v !== null && typeof v !== 'object').map(([k, v]) => `${k}=${String(v)}`).join('  ')).join('\n')}\n`);
      } catch (err) {
        process.stderr.write(`svc inventory: ${describeFailure(err)}\n`);
        process.exit(1);
      }
    });
}
