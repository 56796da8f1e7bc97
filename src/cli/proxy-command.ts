import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { buildRuntimeConfig, readConfigFile } from '../config/runtime.js';
import { describeZodError } from '../config/zod-error.js';
import { ConfigError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { svcHome } from '../lib/paths.js';
import { ProxyServer } from '../proxy/server.js';
import type { HeapSizing } from '../proxy/heap-sizing.js';
import { TraceSink } from '../traces/sink.js';
import { ModelCatalog } from '../upstream/catalog.js';
import { createStore } from '../state/index.js';
import { DecideRuntime } from '../decide/runtime.js';
import { connectControlPlane } from './proxy-sync.js';
import { HoldsClient } from '../proxy/holds-client.js';
import { IoThreadGroup } from '../proxy/io-threads/group.js';
import { LocalSessionJudge } from '../policy/anomaly/sessions.js';
import { claimPort } from '../lib/listen.js';

const optionsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  config: z.string().min(1).optional(),
  upstreamUrl: z.url({ protocol: /^https?$/ }).optional(),
  threads: z.coerce.number().int().min(1).max(256),
  ioThreads: z.union([z.literal('auto'), z.coerce.number().int().min(1).max(64)]),
  valkeyUrl: z.url({ protocol: /^(redis|rediss|valkey|valkeys)$/ }).optional(),
  controlPlaneUrl: z.url({ protocol: /^https?$/ }).optional(),
  apiKey: z.string().regex(/^(vk_[A-Za-z0-9_-]{8,200}|gwt_[0-9A-Z]{26}\.[A-Za-z0-9_-]{43})$/, 'the API key is a vk_ key or a gateway\'s gwt_ token').optional(),
  gatewayId: z.string().min(1).max(128).optional(),
  syncPollMs: z.coerce.number().int().min(100).max(3_600_000),
  syncHeartbeatMs: z.coerce.number().int().min(100).max(3_600_000),
  traceShipMs: z.coerce.number().int().min(50).max(600_000),
  traceSpillMax: z.coerce.number().int().min(0).max(100_000_000),
}).refine((o) => o.controlPlaneUrl === undefined || o.apiKey !== undefined, { message: '--control-plane-url needs --api-key', path: ['apiKey'] });

export type ProxyCommandOptions = z.input<typeof optionsSchema>;
type ProxyFlags = Partial<Record<'port' | 'host' | 'config' | 'upstreamUrl' | 'threads' | 'ioThreads' | 'valkeyUrl' | 'controlPlaneUrl' | 'apiKey' | 'gatewayId', string | undefined>>;

export function defaultThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

/**
 * The most I/O threads `auto` starts: one per core on Linux, whose kernel spreads a shared port's
 * connections over its listeners. Elsewhere (macOS, the BSDs) one listener takes them all, so a
 * second thread would cost memory and take no load.
 */
export function maxAutoIoThreads(platform = process.platform): number {
  return platform === 'linux' ? Math.min(64, availableParallelism()) : 1;
}

/** Flags win over environment variables, which win over defaults. */
export function proxyOptionsFromEnv(flags: ProxyFlags, env = process.env) {
  const parsed = optionsSchema.safeParse({
    port: flags.port ?? env.SVC_PROXY_PORT ?? 4000,
    host: flags.host ?? env.SVC_PROXY_HOST ?? '127.0.0.1',
    config: flags.config ?? env.SVC_CONFIG,
    upstreamUrl: flags.upstreamUrl ?? env.SVC_UPSTREAM_URL,
    threads: flags.threads ?? env.SVC_THREADS ?? defaultThreads(),
    ioThreads: flags.ioThreads ?? (env.SVC_IO_THREADS || 'auto'),
    valkeyUrl: flags.valkeyUrl ?? env.SVC_VALKEY_URL,
    controlPlaneUrl: flags.controlPlaneUrl ?? (env.SVC_CONTROL_PLANE_URL || undefined),
    apiKey: flags.apiKey ?? (env.SVC_API_KEY || undefined),
    gatewayId: flags.gatewayId ?? (env.SVC_GATEWAY_ID || undefined),
    syncPollMs: env.SVC_SYNC_POLL_MS ?? 30_000,
    syncHeartbeatMs: env.SVC_SYNC_HEARTBEAT_MS ?? 30_000,
    traceShipMs: env.SVC_TRACE_SHIP_MS ?? 1000,
    traceSpillMax: env.SVC_TRACE_SPILL_MAX ?? 100_000,
  });
  if (!parsed.success) throw new ConfigError(`invalid option: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** Runs the proxy; `heap` is its heap's sizing, installed before this module loaded (program.ts). */
export async function runProxy(flags: ProxyFlags, heap: HeapSizing): Promise<void> {
  const env = process.env;
  const options = proxyOptionsFromEnv(flags, env);
  const logger = createLogger();
  const file = options.config === undefined ? undefined : await readConfigFile(options.config);
  const local = {
    file,
    upstreamUrl: options.upstreamUrl,
    extraKeys: env.SVC_VIRTUAL_KEYS ? env.SVC_VIRTUAL_KEYS.split(',').map((k) => k.trim()).filter(Boolean) : [],
  };
  let config = buildRuntimeConfig(local);
  const link =
    options.controlPlaneUrl === undefined
      ? undefined
      : await connectControlPlane({
          controlPlaneUrl: options.controlPlaneUrl,
          apiKey: options.apiKey!,
          gatewayId: options.gatewayId,
          home: svcHome(env),
          local,
          pollIntervalMs: options.syncPollMs,
          heartbeatIntervalMs: options.syncHeartbeatMs,
          traceShipIntervalMs: options.traceShipMs,
          traceSpillMax: options.traceSpillMax,
          logger,
        });
  if (link !== undefined) config = link.config;
  const sink = new TraceSink({ dir: join(svcHome(env), 'traces'), logger, forward: link?.forwardTrace });
  const timeout = config.limits.storeTimeoutMs;
  const store = await createStore({
    valkeyUrl: options.valkeyUrl,
    logger,
    reserveTimeoutMs: timeout,
    readTimeoutMs: Math.ceil(timeout / 2),
    settleTimeoutMs: timeout * 2,
    ledgerFile: join(svcHome(env), 'state', 'redis-ledger.json'),
  });
  // Decide rules read from the SOPs of the folder the proxy runs in (or SVC_DECIDE_ROOT), plus the
  // config's own; a config with other decide rules (a policy from the control plane) gets a new runtime.
  const decideRoot = env.SVC_DECIDE_ROOT || process.cwd();
  const loadDecide = DecideRuntime.loader({ env, root: decideRoot, logger });
  const decide = await loadDecide(config.decideRules);
  const holds = link === undefined ? undefined : new HoldsClient({ api: link.api, store, gatewayId: link.gatewayId, logger });
  const sessions = new LocalSessionJudge();
  // auto: one thread, and up to one per core as load needs them (each costs about 50 MB).
  const auto = options.ioThreads === 'auto';
  const maxThreads = options.ioThreads === 'auto' ? maxAutoIoThreads() : options.ioThreads;
  const threaded = maxThreads > 1;
  // The other I/O threads share the port: it is claimed for the process first, so a port in use still fails.
  const claimed = threaded ? await claimPort(options.host, options.port) : options.port;
  let group: IoThreadGroup | undefined;
  const server = new ProxyServer({
    holds,
    decide,
    loadDecide,
    host: options.host,
    port: claimed,
    config,
    catalog: ModelCatalog.load(),
    sink,
    logger,
    threads: options.threads,
    store,
    sessions,
    cluster: threaded ? { health: () => group!.health(), metrics: () => group!.metrics() } : undefined,
    sharedPort: threaded,
  });
  if (threaded) {
    group = await IoThreadGroup.start({
      server,
      initial: auto ? 1 : maxThreads,
      max: maxThreads,
      host: options.host,
      port: claimed,
      config,
      inspectionThreads: options.threads,
      decideRoot,
      store,
      sink,
      holds,
      sessions,
      logger,
    });
  }
  heap.capWhile(() => (group?.size ?? 1) === 1 && server.inspectionWorkers === 0);
  link?.attach(group ?? server);
  const port = await server.listen();
  if (config.openMode) {
    logger.warn('no virtual key configured: open local mode, every caller on this machine is accepted');
  }
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  process.stdout.write(
    `svc proxy listening on http://${host}:${port} (config ${config.version}${threaded ? `, ${auto ? `up to ${maxThreads}` : maxThreads} I/O threads` : ''}${config.openMode ? ', open local mode' : ''}${config.upstreamUrl ? `, upstream ${config.upstreamUrl}` : ''}` +
      `${link ? `, control plane ${options.controlPlaneUrl} as ${link.gatewayId}${link.source === 'last-good' ? ' from the last good config' : ''}` : ''})\n`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without draining');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, inflight: (group ?? server).inflightCount }, 'draining');
    const drainMs = server.currentConfig.limits.drainTimeoutMs;
    server.stopAccepting();
    (group?.close(drainMs) ?? Promise.resolve())
      .then(() => server.close(drainMs))
      .then(() => link?.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'error while draining');
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
