import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRuntimeConfig } from '../../src/config/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { ProxyServer } from '../../src/proxy/server.js';
import { TraceSink } from '../../src/traces/sink.js';
import { ModelCatalog } from '../../src/upstream/catalog.js';
import { MemoryStore, type Store } from '../../src/state/index.js';
import type { DecideRuntime } from '../../src/decide/runtime.js';
import type { HoldsClient } from '../../src/proxy/holds-client.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface RunningProxy {
  url: string;
  port: number;
  server: ProxyServer;
  sink: TraceSink;
}

/** A proxy in this process on a free port, closed when the test ends. */
export async function startProxy(
  t: Teardown,
  opts: {
    upstreamUrl?: string;
    file?: unknown;
    env?: NodeJS.ProcessEnv;
    policyWorkerUrl?: URL;
    store?: Store;
    clock?: () => number;
    decide?: DecideRuntime;
    loadDecide?: (records: readonly unknown[]) => Promise<DecideRuntime>;
    holds?: HoldsClient;
    /** How many traces `sink.recent()` keeps (default 1000). */
    traceRing?: number;
  } = {},
): Promise<RunningProxy> {
  const sink = new TraceSink({ dir: undefined, ringSize: opts.traceRing ?? 1000 });
  const server = new ProxyServer({
    host: '127.0.0.1',
    port: 0,
    config: buildRuntimeConfig({ file: withPatientRules(opts.file), upstreamUrl: opts.upstreamUrl }),
    catalog: ModelCatalog.load(),
    sink,
    logger: createLogger('silent'),
    threads: 1,
    store: opts.store ?? new MemoryStore(),
    clock: opts.clock,
    env: opts.env ?? {},
    policyWorkerUrl: opts.policyWorkerUrl,
    decide: opts.decide,
    loadDecide: opts.loadDecide,
    holds: opts.holds,
  });
  const port = await server.listen();
  t.teardown(() => server.close(0));
  return { url: `http://127.0.0.1:${port}`, port, server, sink };
}

/**
 * A config file for a spawned `svc proxy` (`--config`) that gives WASM rules the same patient
 * deadline as withPatientRules; its path.
 */
export async function patientRulesConfig(dir: string): Promise<string> {
  const file = join(dir, 'patient-rules.json');
  await writeFile(file, JSON.stringify(withPatientRules({})));
  return file;
}

/**
 * A rule's 50 ms deadline is a production bound; a test on a loaded machine is not about it, so
 * rules get 5 s unless the test sets its own deadline.
 */
function withPatientRules(file: unknown): unknown {
  const config = (file ?? {}) as { wasm?: { deadlineMs?: number } };
  if (typeof config !== 'object' || config.wasm?.deadlineMs !== undefined) return file;
  return { ...config, wasm: { ...config.wasm, deadlineMs: 5000 } };
}

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface SpawnedCommand {
  child: ChildProcess;
  /** The first line the command printed on stdout. */
  readyLine: string;
  stderr(): string;
  /** Resolves with the exit code once the process is gone. */
  exited: Promise<number | null>;
}

export interface SpawnedProxy extends SpawnedCommand {
  url: string;
  port: number;
}

/**
 * A real `svc <command>` from dist/ as a child process, once it has printed its ready line; killed
 * when the test ends. Rejects with its stderr if it exits first. `nodeArgs` go to node itself.
 */
export async function spawnCommand(t: Teardown, args: string[], env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Promise<SpawnedCommand> {
  const child = spawn(process.execPath, [...nodeArgs, CLI, ...args], {
    env: { ...process.env, SVC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return exited;
  });
  const readyLine = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    void exited.then((code) => reject(new Error(`svc ${args[0]} exited with ${code} before it was ready: ${stderr}`)));
  });
  return { child, readyLine, stderr: () => stderr, exited };
}

/** The real `svc proxy` command, on a free port. */
export async function spawnProxy(t: Teardown, args: string[], env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Promise<SpawnedProxy> {
  const proxy = await spawnCommand(t, ['proxy', '--port', '0', ...args], env, nodeArgs);
  const port = Number(/:(\d+) /.exec(proxy.readyLine)?.[1]);
  return { ...proxy, url: `http://127.0.0.1:${port}`, port };
}
