import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI } from './proxy.js';
import { until } from './until.js';

interface Teardown {
  teardown(fn: () => unknown): void;
  testdir(files?: Record<string, string>): string;
}

const bin = (name: string) => fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url));
export const EVERYTHING = bin('mcp-server-everything');
export const FILESYSTEM = bin('mcp-server-filesystem');
export const TEST_SERVER = fileURLToPath(new URL('../fixtures/mcp/test-server.mjs', import.meta.url));

export interface Wrapped {
  client: Client;
  /** The wrapper's SVC_HOME (its traces are under mcp-traces/). */
  home: string;
  stderr(): string;
}

/** A proxy config file holding `settings` as the workspace's settings; its path. */
export function writeSettings(dir: string, settings: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const file = join(dir, 'svc.json');
  writeFileSync(file, JSON.stringify({ settings, ...extra }));
  return file;
}

/**
 * The official SDK client connected to `svc mcp wrap --server <server> -- <command…>`, the real CLI
 * from dist/ as a child process; closed (and the wrapper with it) when the test ends.
 */
export async function connectWrapped(
  t: Teardown,
  opts: { server: string; command: string[]; settings?: Record<string, unknown> | null; env?: Record<string, string>; wrapArgs?: string[] },
): Promise<Wrapped> {
  // Outside the test's own folder: the wrapper may still be writing its traces when tap cleans that up.
  const home = mkdtempSync(join(tmpdir(), 'svc-mcp-'));
  const config = opts.settings === null ? [] : ['--config', writeSettings(home, opts.settings ?? {})];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('SVC_')) env[k] = v;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', 'wrap', '--server', opts.server, ...config, ...(opts.wrapArgs ?? []), '--', ...opts.command],
    env: { ...env, SVC_HOME: home, SVC_LOG_LEVEL: 'warn', ...opts.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(async () => {
    await client.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 10 });
  });
  return { client, home, stderr: () => stderr };
}

/** The text of a tool result's first content item. */
export function resultText(result: unknown): string {
  const first = (result as CallToolResult).content[0];
  return first !== undefined && first.type === 'text' ? first.text : '';
}

/** The trace records a wrapper wrote under `home`. */
export function mcpTraces(home: string): Array<Record<string, any>> {
  const file = join(home, 'mcp-traces', 'traces.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

/** A generous functional wait: several real processes start per test on a shared machine. */
export const waitFor = <T>(what: string, probe: () => T | undefined) => until(what, probe, 120_000);

/** The wrapper as a raw child process speaking newline-delimited JSON-RPC. */
export function rawWrapper(t: Teardown, command: string[]) {
  const home = t.testdir();
  const config = join(home, 'svc.json');
  writeFileSync(config, '{}');
  const child = spawn(process.execPath, [CLI, 'mcp', 'wrap', '--server', 'test', '--config', config, '--', ...command], {
    env: { ...process.env, SVC_HOME: home, SVC_LOG_LEVEL: 'warn' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return exited;
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + '\n');
  const messages = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
  const initialize = async () => {
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await waitFor('the initialize answer', () => messages().find((m) => m.id === 1));
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  };
  return { child, exited, send, messages, initialize, stderr: () => err };
}


/** A child process killed when the test ends; resolves once `ready` matches its output. */
export async function startChild(t: Teardown, args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(child, 'exit');
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (c: Buffer) => {
      output += c.toString();
      if (ready.test(output)) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    void exited.then(() => reject(new Error(`exited before it was ready: ${output}`)));
  });
  return { child, output: () => output };
}
