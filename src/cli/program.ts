import { Command } from 'commander';
import { StartupError } from '../lib/errors.js';
import { VERSION } from '../lib/version.js';
import type { ControlPlaneFlags } from './controlplane-command.js';

/** Commands that run a server, registered without the others. */
const SERVER_COMMANDS = new Set(['proxy', 'controlplane']);

function fail(err: unknown): never {
  const message = err instanceof StartupError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`svc: ${message}\n`);
  process.exit(2);
}

// The servers are loaded only by their own commands, so short-lived commands (an MCP wrapper a
// harness starts, `svc decision`) do not pay for the proxy's and control plane's modules.
const program = new Command();
// Positional options: `--version` after a subcommand is that subcommand's (`svc policy rollback <id> --version 3`), not the program's.
program.name('svc').description('A governed gateway for AI coding agents.').version(VERSION).enablePositionalOptions();

program
  .command('proxy')
  .description('run the data-plane proxy (OpenAI- and Anthropic-compatible) on port 4000')
  .option('--port <port>', 'port to listen on (SVC_PROXY_PORT, default 4000)')
  .option('--host <host>', 'address to bind (SVC_PROXY_HOST, default 127.0.0.1)')
  .option('--config <file>', 'JSON config file (SVC_CONFIG)')
  .option('--upstream-url <url>', 'send every provider\'s traffic to this base URL (SVC_UPSTREAM_URL)')
  .option('--threads <n>', 'policy worker threads (SVC_THREADS, default cores - 1)')
  .option('--io-threads <n|auto>', 'threads serving the port, sharing budgets, caps, holds and traces (SVC_IO_THREADS, default auto: one, then up to one per core while the main thread stays busy and a core is idle)')
  .option('--valkey-url <url>', 'Redis/Valkey URL of the shared store (SVC_VALKEY_URL)')
  .option('--control-plane-url <url>', 'take the config from this control plane and ship traces to it (SVC_CONTROL_PLANE_URL)')
  .option('--api-key <key>', "the gateway's gwt_ token (it names the gateway), or a workspace vk_ key, for the control plane (SVC_API_KEY)")
  .option('--gateway-id <id>', 'the gateway to sync as; without it one is registered and remembered (SVC_GATEWAY_ID)')
  .action((opts: Record<string, string | undefined>) =>
    // The heap is sized before the proxy's modules load: loading them would grow the young generation past its cap.
    import('../proxy/heap-sizing.js')
      .then(({ sizeProxyHeap }) => {
        const heap = sizeProxyHeap();
        return import('./proxy-command.js').then(({ runProxy }) => runProxy(opts, heap));
      })
      .catch(fail),
  );

program
  .command('controlplane')
  .description('run the thin control plane (REST API under /api/v1, config push to gateways) on port 3001')
  .option('--port <port>', 'port to listen on (SVC_CONTROLPLANE_PORT, default 3001)')
  .option('--host <host>', 'address to bind (SVC_CONTROLPLANE_HOST, default 127.0.0.1)')
  .option('--database-url <url>', 'PostgreSQL instead of the embedded database under ~/.svc/controlplane (DATABASE_URL)')
  .option('--no-signup', 'switch sign-up off: signup and register answer 503 SIGNUP_DISABLED (SVC_SIGNUP_ENABLED=false)')
  .option('--provider-base-url <url>', "check provider credentials against this base URL instead of each provider's own (SVC_PROVIDER_BASE_URL)")
  .option('--allow-private-upstreams', 'let credential checks, webhooks and SIEM destinations call loopback, private and link-local addresses and use cleartext, never metadata addresses (SVC_ALLOW_PRIVATE_UPSTREAMS=true)')
  .option('--valkey-url <url>', 'Redis/Valkey shared by control planes for the sign-in throttles (SVC_VALKEY_URL)')
  .option('--mail-transport <kind>', 'where verification mail goes: file (the outbox under SVC_HOME, default), console or smtp (SVC_MAIL_TRANSPORT)')
  .option('--smtp-url <url>', 'SMTP server for mail, smtp(s)://user:pass@host:port (SVC_SMTP_URL)')
  .option('--mail-from <address>', 'sender of verification mail (SVC_MAIL_FROM)')
  .action((opts: ControlPlaneFlags) => import('./controlplane-command.js').then(({ runControlPlane }) => runControlPlane(opts)).catch(fail));

// The servers' own command lines register alone: a proxy does not hold every other command's
// modules (interactive prompts, the MCP SDK…) for as long as it runs, about 20 MB.
if (!SERVER_COMMANDS.has(process.argv[2] ?? '')) await (await import('./commands.js')).registerCommands(program, fail, process.argv[2]);

program.parseAsync(process.argv).catch(fail);
