#!/usr/bin/env node
import { Command } from 'commander';
import { ConfigError } from '../lib/errors.js';
import { VERSION } from '../lib/version.js';
import { registerPolicyCommands } from './policy-command.js';
import { runProxy } from './proxy-command.js';

function fail(err: unknown): never {
  const message = err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`svc: ${message}\n`);
  process.exit(2);
}

const program = new Command();
program.name('svc').description('A governed gateway for AI coding agents.').version(VERSION);

program
  .command('proxy')
  .description('run the data-plane proxy (OpenAI- and Anthropic-compatible) on port 4000')
  .option('--port <port>', 'port to listen on (SVC_PROXY_PORT, default 4000)')
  .option('--host <host>', 'address to bind (SVC_PROXY_HOST, default 127.0.0.1)')
  .option('--config <file>', 'JSON config file (SVC_CONFIG)')
  .option('--upstream-url <url>', 'send every provider\'s traffic to this base URL (SVC_UPSTREAM_URL)')
  .option('--threads <n>', 'policy worker threads (SVC_THREADS, default cores - 1)')
  .option('--valkey-url <url>', 'Redis/Valkey URL of the shared store (SVC_VALKEY_URL)')
  .action((opts: Record<string, string | undefined>) => runProxy(opts).catch(fail));

registerPolicyCommands(program, fail);

program.parseAsync(process.argv).catch(fail);
