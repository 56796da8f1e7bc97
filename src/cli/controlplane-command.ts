import { z } from 'zod';
import { loggableError } from '../controlplane/failures.js';
import { startControlPlane } from '../controlplane/start.js';
import { describeZodError } from '../config/zod-error.js';
import { ConfigError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { svcHome } from '../lib/paths.js';

const optionsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  databaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  signup: z.boolean(),
  providerBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
  allowPrivateUpstreams: z.boolean(),
  valkeyUrl: z.url({ protocol: /^(redis|rediss|valkey|valkeys)$/ }).optional(),
  mailTransport: z.enum(['file', 'console', 'smtp']),
  smtpUrl: z.url({ protocol: /^smtps?$/ }).optional(),
  mailFrom: z.string().min(3).max(256).optional(),
}).refine((o) => o.mailTransport !== 'smtp' || o.smtpUrl !== undefined, { message: 'the smtp mail transport needs --smtp-url (SVC_SMTP_URL)', path: ['smtpUrl'] });

export interface ControlPlaneFlags {
  port?: string;
  host?: string;
  databaseUrl?: string;
  /** commander's --no-signup sets this false. */
  signup?: boolean;
  providerBaseUrl?: string;
  allowPrivateUpstreams?: boolean;
  valkeyUrl?: string;
  mailTransport?: string;
  smtpUrl?: string;
  mailFrom?: string;
}

const truthy = (value: string | undefined) => ['1', 'true', 'on', 'yes'].includes((value ?? '').toLowerCase());

/** Flags win over environment variables, which win over defaults. */
export function controlPlaneOptionsFromEnv(flags: ControlPlaneFlags, env = process.env) {
  const parsed = optionsSchema.safeParse({
    port: flags.port ?? env.SVC_CONTROLPLANE_PORT ?? 3001,
    host: flags.host ?? env.SVC_CONTROLPLANE_HOST ?? '127.0.0.1',
    databaseUrl: flags.databaseUrl ?? (env.DATABASE_URL || undefined),
    signup: flags.signup === false ? false : !['0', 'false', 'off'].includes((env.SVC_SIGNUP_ENABLED ?? 'true').toLowerCase()),
    providerBaseUrl: flags.providerBaseUrl ?? (env.SVC_PROVIDER_BASE_URL || undefined),
    allowPrivateUpstreams: flags.allowPrivateUpstreams === true || truthy(env.SVC_ALLOW_PRIVATE_UPSTREAMS),
    valkeyUrl: flags.valkeyUrl ?? (env.SVC_VALKEY_URL || undefined),
    mailTransport: flags.mailTransport ?? (env.SVC_MAIL_TRANSPORT || ((flags.smtpUrl ?? env.SVC_SMTP_URL) ? 'smtp' : 'file')),
    smtpUrl: flags.smtpUrl ?? (env.SVC_SMTP_URL || undefined),
    mailFrom: flags.mailFrom ?? (env.SVC_MAIL_FROM || undefined),
  });
  if (!parsed.success) throw new ConfigError(`invalid option: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

export async function runControlPlane(flags: ControlPlaneFlags): Promise<void> {
  const env = process.env;
  const options = controlPlaneOptionsFromEnv(flags, env);
  // Everything this process writes (database, key file, outbox) is for its owner only, whatever
  // the umask it was started with.
  process.umask(0o077);
  const logger = createLogger(undefined, 'controlplane');
  const running = await startControlPlane({
    host: options.host,
    port: options.port,
    home: svcHome(env),
    databaseUrl: options.databaseUrl,
    secretKey: env.SVC_SECRET_KEY,
    valkeyUrl: options.valkeyUrl,
    mail: { transport: options.mailTransport, smtpUrl: options.smtpUrl, from: options.mailFrom },
    settings: {
      signupEnabled: options.signup,
      providerBaseUrl: options.providerBaseUrl,
      refreshTtlSeconds: 30 * 24 * 3600,
      allowPrivateUpstreams: options.allowPrivateUpstreams,
    },
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
        logger.error({ failure: loggableError(err) }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
