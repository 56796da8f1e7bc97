import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { z } from 'zod';
import { describeZodError } from '../config/zod-error.js';
import { ConfigError } from '../lib/errors.js';
import { describeFailure, linkedApi } from './control-plane-link.js';

/**
 * The admin commands over the control plane's REST API (seed 002's command table): traces,
 * settings, provider credentials, and the control plane's policies. Each reads the control plane
 * and key from SVC_CONTROL_PLANE_URL / SVC_API_KEY or `svc login`; exit 1 when it refuses.
 */

const ACTIONS = ['BYPASS', 'ENHANCE', 'HIJACK', 'KILL'] as const;

const listFlags = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  since: z
    .string()
    .regex(/^\d+[mhd]$/, 'a duration such as 30m, 24h or 7d')
    .default('24h'),
  action: z.enum(ACTIONS).optional(),
  model: z.string().min(1).max(256).optional(),
  json: z.boolean(),
});

function sinceIso(duration: string, now = Date.now()): string {
  const n = Number(duration.slice(0, -1));
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[duration.slice(-1) as 'm' | 'h' | 'd'];
  return new Date(now - n * unit).toISOString();
}

/** A settings value as typed: JSON when it reads as JSON (true, 30, {"a":1}), else the text itself. */
function settingValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function run(label: string, work: () => Promise<string>): Promise<void> {
  try {
    process.stdout.write(await work());
  } catch (err) {
    process.stderr.write(`svc ${label}: ${describeFailure(err)}\n`);
    process.exitCode = 1;
  }
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export function registerAdminCommands(program: Command, fail: (err: unknown) => never): void {
  const traces = program.command('traces').description("the workspace's traces");
  traces
    .command('list')
    .description('the newest traces')
    .option('--limit <n>', '1–100', '20')
    .option('--since <duration>', '30m, 24h, 7d', '24h')
    .option('--action <type>', ACTIONS.join(', '))
    .option('--model <name>', 'only this model')
    .option('--json', 'as JSON', false)
    .action((opts: Record<string, unknown>) => {
      const parsed = listFlags.safeParse(opts);
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const f = parsed.data;
      return run('traces list', async () => {
        const query = new URLSearchParams({ limit: String(f.limit), since: sinceIso(f.since), ...(f.action ? { enforcement: f.action } : {}), ...(f.model ? { model: f.model } : {}) });
        const body = await linkedApi(process.env).api.json<{ traces: Array<Record<string, unknown>>; total: number }>('GET', `/traces?${query}`);
        if (f.json) return json(body);
        if (body.traces.length === 0) return 'no traces\n';
        return `${body.traces.map((tr) => [tr.time, tr.id, tr.enforcement, tr.model ?? tr.route, tr.status, tr.costUsd ?? ''].join('  ')).join('\n')}\n${body.traces.length} of ${body.total}\n`;
      });
    });
  traces
    .command('inspect')
    .description('one trace in full')
    .argument('<trace_id>')
    .action((id: string) => run('traces inspect', async () => json(await linkedApi(process.env).api.json('GET', `/traces/${encodeURIComponent(id)}`))));

  const settings = program.command('settings').description("the workspace's settings");
  settings
    .command('get')
    .description('every setting, or one')
    .argument('[key]')
    .action((key: string | undefined) =>
      run('settings get', async () => {
        const body = await linkedApi(process.env).api.json<{ settings: Record<string, unknown> }>('GET', '/workspace/settings');
        if (key === undefined) return json(body.settings);
        if (!(key in body.settings)) throw new ConfigError(`no setting '${key}'`);
        return json(body.settings[key]);
      }),
    );
  settings
    .command('set')
    .description('write one setting (OWNER or ADMIN): a value (JSON when it reads as JSON) or --file')
    .argument('<key>')
    .argument('[value]')
    .option('--file <path>', 'read the value (JSON) from a file')
    .action((key: string, value: string | undefined, opts: { file?: string }) =>
      run('settings set', async () => {
        if ((value === undefined) === (opts.file === undefined)) throw new ConfigError('give a value or --file, not both');
        const parsed = opts.file === undefined ? settingValue(value!) : JSON.parse(await readFile(opts.file, 'utf8'));
        const body = await linkedApi(process.env).api.json<{ settings: Record<string, unknown> }>('PUT', '/workspace/settings', { [key]: parsed });
        return `${key} = ${JSON.stringify(body.settings[key])}\n`;
      }),
    );

  const credentials = program.command('credentials').description("the workspace's provider credentials");
  credentials
    .command('list')
    .option('--json', 'as JSON', false)
    .action((opts: { json: boolean }) =>
      run('credentials list', async () => {
        const body = await linkedApi(process.env).api.json<{ credentials: Array<{ id: string; provisioned: boolean; last_four: string | null }> }>('GET', '/workspace/provider-credentials');
        return opts.json ? json(body) : `${body.credentials.map((c) => `${c.id.padEnd(14)} ${c.provisioned ? `set (…${c.last_four ?? ''})` : 'not set'}`).join('\n')}\n`;
      }),
    );
  credentials
    .command('set')
    .argument('<provider>')
    .requiredOption('--field <key=value...>', 'a field of the credential (repeatable), e.g. --field apiKey=sk-…')
    .option('--json', 'as JSON', false)
    .action((provider: string, opts: { field: string[]; json: boolean }) =>
      run('credentials set', async () => {
        const fields: Record<string, string> = {};
        for (const pair of opts.field) {
          const at = pair.indexOf('=');
          if (at <= 0) throw new ConfigError(`--field ${pair}: expected key=value`);
          fields[pair.slice(0, at)] = pair.slice(at + 1);
        }
        const body = await linkedApi(process.env).api.json<{ id: string; last_four: string | null }>('PUT', `/workspace/provider-credentials/${encodeURIComponent(provider)}`, { fields });
        return opts.json ? json(body) : `${body.id}: set (…${body.last_four ?? ''})\n`;
      }),
    );
  credentials
    .command('unset')
    .argument('<provider>')
    .action((provider: string) =>
      run('credentials unset', async () => {
        await linkedApi(process.env).api.json('DELETE', `/workspace/provider-credentials/${encodeURIComponent(provider)}`);
        return `${provider}: removed\n`;
      }),
    );

  // The control plane's policies, beside the local WASM rule commands under `svc policy`.
  const policy = program.commands.find((c) => c.name() === 'policy') ?? program.command('policy');
  for (const action of ['enable', 'disable'] as const) {
    policy
      .command(action)
      .description(`${action} a control-plane policy`)
      .argument('<id>')
      .action((id: string) =>
        run(`policy ${action}`, async () => {
          const body = await linkedApi(process.env).api.json<{ id: string; enabled: boolean; version: number }>('POST', `/policies/${encodeURIComponent(id)}/${action}`);
          return `${body.id}: ${body.enabled ? 'enabled' : 'disabled'} (version ${body.version})\n`;
        }),
      );
  }
  policy
    .command('rollback')
    .description('restore version N of a control-plane policy as its next version')
    .argument('<id>')
    .requiredOption('--version <v>', 'the version to restore')
    .action((id: string, opts: { version: string }) =>
      run('policy rollback', async () => {
        const version = z.coerce.number().int().min(1).parse(opts.version);
        const body = await linkedApi(process.env).api.json<{ id: string; version: number }>('POST', `/policies/${encodeURIComponent(id)}/rollback`, { version });
        return `${body.id}: version ${version} restored as version ${body.version}\n`;
      }),
    );
  policy
    .command('export')
    .description("the control plane's live policies as a JSON array")
    .option('--all', 'every live policy (the only choice today)', false)
    .action(() => run('policy export', async () => json((await linkedApi(process.env).api.json<{ policies: unknown[] }>('GET', '/policies')).policies)));
}
