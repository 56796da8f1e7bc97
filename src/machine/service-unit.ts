import { join } from 'node:path';
import { SVC_COMMAND } from './mcp-install.js';

/** What `svc daemon install` runs as a service: the sync daemon, the MCP daemon, or the proxy. */
export type ServiceKind = 'connect' | 'mcp' | 'proxy';

export interface ServiceOptions {
  readonly kind: ServiceKind;
  /** A system-wide unit (`/etc/systemd/system`) instead of the user's. */
  readonly system: boolean;
  readonly home: string;
  /** The svc entry point to run (default: this one, with this Node). */
  readonly binaryPath: string | undefined;
  readonly port: number;
  readonly valkeyUrl: string | undefined;
  readonly upstreamUrl: string | undefined;
}

export interface ServiceFiles {
  readonly name: string;
  readonly unitPath: string;
  readonly unit: string;
  /** Secrets go in an environment file only its owner can read, never in the unit. */
  readonly envPath: string;
  readonly env: Readonly<Record<string, string>>;
}

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, '\\$1')}"`);

/** The systemd unit and environment file of a service; it restarts on any exit. */
export function serviceFiles(opts: ServiceOptions, env: Readonly<Record<string, string>>): ServiceFiles {
  const name = opts.kind === 'connect' ? 'svc-connect' : opts.kind === 'mcp' ? 'svc-mcp-daemon' : 'svc-proxy';
  const argv = opts.binaryPath === undefined ? [...SVC_COMMAND] : [opts.binaryPath];
  const args =
    opts.kind === 'connect'
      ? ['connect']
      : opts.kind === 'mcp'
        ? ['mcp', 'daemon']
        : ['proxy', '--port', String(opts.port), ...(opts.valkeyUrl === undefined ? [] : ['--valkey-url', opts.valkeyUrl]), ...(opts.upstreamUrl === undefined ? [] : ['--upstream-url', opts.upstreamUrl])];
  const unitDir = opts.system ? '/etc/systemd/system' : join(opts.home, '.config', 'systemd', 'user');
  const envPath = join(opts.home, '.svc', `${name}.env`);
  const description = { connect: 'svc sync daemon (policy snapshot and inventory)', mcp: 'svc MCP daemon (policy look-ups for wrapped MCP servers)', proxy: 'svc proxy (governed gateway for AI coding agents)' }[opts.kind];
  const unit = [
    '[Unit]',
    `Description=${description}`,
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${[...argv, ...args].map(quote).join(' ')}`,
    `EnvironmentFile=${envPath}`,
    `WorkingDirectory=${opts.home}`,
    'Restart=always',
    'RestartSec=5',
    '',
    '[Install]',
    `WantedBy=${opts.system ? 'multi-user.target' : 'default.target'}`,
    '',
  ].join('\n');
  return { name, unitPath: join(unitDir, `${name}.service`), unit, envPath, env };
}

/** The environment file's text (values quoted for systemd). */
export function environmentFile(env: Readonly<Record<string, string>>): string {
  return Object.entries(env)
    .map(([k, v]) => `${k}=${quote(v)}`)
    .join('\n')
    .concat('\n');
}
