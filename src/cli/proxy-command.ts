import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { buildRuntimeConfig, describeZodError, readConfigFile } from '../config/runtime.js';
import { ConfigError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { svcHome } from '../lib/paths.js';
import { ProxyServer } from '../proxy/server.js';
import { TraceSink } from '../traces/sink.js';
import { ModelCatalog } from '../upstream/catalog.js';
import { createStore } from '../state/index.js';
import { DecideRuntime } from '../decide/runtime.js';

const optionsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  config: z.string().min(1).optional(),
  upstreamUrl: z.url({ protocol: /^https?$/ }).optional(),
  threads: z.coerce.number().int().min(1).max(256),
  valkeyUrl: z.url({ protocol: /^(redis|rediss|valkey|valkeys)$/ }).optional(),
});

export type ProxyCommandOptions = z.input<typeof optionsSchema>;

export function defaultThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** Flags win over environment variables, which win over defaults. */
export function proxyOptionsFromEnv(flags: Partial<Record<keyof ProxyCommandOptions, string | undefined>>, env = process.env) {
  const parsed = optionsSchema.safeParse({
    port: flags.port ?? env.SVC_PROXY_PORT ?? 4000,
    host: flags.host ?? env.SVC_PROXY_HOST ?? '127.0.0.1',
    config: flags.config ?? env.SVC_CONFIG,
    upstreamUrl: flags.upstreamUrl ?? env.SVC_UPSTREAM_URL,
    threads: flags.threads ?? env.SVC_THREADS ?? defaultThreads(),
    valkeyUrl: flags.valkeyUrl ?? env.SVC_VALKEY_URL,
  });
  if (!parsed.success) throw new ConfigError(`invalid option: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

export async function runProxy(flags: Partial<Record<keyof ProxyCommandOptions, string | undefined>>): Promise<void> {
  const env = process.env;
  const options = proxyOptionsFromEnv(flags, env);
  const logger = createLogger();
  const file = options.config === undefined ? undefined : await readConfigFile(options.config);
  const config = buildRuntimeConfig({
    file,
    upstreamUrl: options.upstreamUrl,
    extraKeys: env.SVC_VIRTUAL_KEYS ? env.SVC_VIRTUAL_KEYS.split(',').map((k) => k.trim()).filter(Boolean) : [],
  });
  const sink = new TraceSink({ dir: join(svcHome(env), 'traces'), logger });
  const timeout = config.limits.storeTimeoutMs;
  const store = createStore({ valkeyUrl: options.valkeyUrl, logger, reserveTimeoutMs: timeout, readTimeoutMs: Math.ceil(timeout / 2), settleTimeoutMs: timeout * 2 });
  // Decide rules read from the SOPs of the folder the proxy runs in (or SVC_DECIDE_ROOT).
  const decide = await DecideRuntime.load({ env, root: env.SVC_DECIDE_ROOT || process.cwd(), configRecords: config.decideRules, logger });
  void decide.start();
  const server = new ProxyServer({
    decide,
    host: options.host,
    port: options.port,
    config,
    catalog: ModelCatalog.load(),
    sink,
    logger,
    threads: options.threads,
    store,
  });
  const port = await server.listen();
  if (config.openMode) {
    logger.warn('no virtual key configured: open local mode, every caller on this machine is accepted');
  }
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  process.stdout.write(
    `svc proxy listening on http://${host}:${port} (config ${config.version}${config.openMode ? ', open local mode' : ''}${config.upstreamUrl ? `, upstream ${config.upstreamUrl}` : ''})\n`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without draining');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, inflight: server.inflightCount }, 'draining');
    server.close().then(
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
