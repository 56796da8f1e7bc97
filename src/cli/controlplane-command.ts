import { z } from 'zod';
import { startControlPlane } from '../controlplane/start.js';
import { describeZodError } from '../config/runtime.js';
import { ConfigError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { svcHome } from '../lib/paths.js';

const optionsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  databaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  signup: z.boolean(),
  providerBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
});

export interface ControlPlaneFlags {
  port?: string;
  host?: string;
  databaseUrl?: string;
  /** commander's --no-signup sets this false. */
  signup?: boolean;
  providerBaseUrl?: string;
}

/** Flags win over environment variables, which win over defaults. */
export function controlPlaneOptionsFromEnv(flags: ControlPlaneFlags, env = process.env) {
  const parsed = optionsSchema.safeParse({
    port: flags.port ?? env.SVC_CONTROLPLANE_PORT ?? 3001,
    host: flags.host ?? env.SVC_CONTROLPLANE_HOST ?? '127.0.0.1',
    databaseUrl: flags.databaseUrl ?? (env.DATABASE_URL || undefined),
    signup: flags.signup === false ? false : !['0', 'false', 'off'].includes((env.SVC_SIGNUP_ENABLED ?? 'true').toLowerCase()),
    providerBaseUrl: flags.providerBaseUrl ?? (env.SVC_PROVIDER_BASE_URL || undefined),
  });
  if (!parsed.success) throw new ConfigError(`invalid option: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

export async function runControlPlane(flags: ControlPlaneFlags): Promise<void> {
  const env = process.env;
  const options = controlPlaneOptionsFromEnv(flags, env);
  const logger = createLogger(undefined, 'controlplane');
  const running = await startControlPlane({
    host: options.host,
    port: options.port,
    home: svcHome(env),
    databaseUrl: options.databaseUrl,
    secretKey: env.SVC_SECRET_KEY,
    settings: { signupEnabled: options.signup, providerBaseUrl: options.providerBaseUrl, refreshTtlSeconds: 30 * 24 * 3600 },
    logger,
  });
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  process.stdout.write(`svc control plane listening on http://${host}:${running.port}/api/v1 (storage ${running.db.kind})\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1);
    stopping = true;
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
