import { z } from 'zod';

/**
 * Request bodies of the gateway routes: pure schemas, shared by the routes that validate them and
 * the management client that sends them.
 */

/** Where a gateway runs; informational, shown to people choosing one. */
export const DEPLOYMENT_TARGETS = ['self-hosted', 'docker', 'kubernetes', 'vm', 'serverless', 'managed'] as const;

const name = z.string().trim().min(1).max(128);
const url = z.url({ protocol: /^https?$/ }).max(2048);

export const registerGatewayBody = z.strictObject({
  name,
  /** Refuse (402 byok_required) a provider the workspace holds no credential for. */
  byokRequired: z.boolean().default(false),
  deploymentTarget: z.enum(DEPLOYMENT_TARGETS).default('self-hosted'),
  /** The address agents use to reach it (for gateway resolution). */
  url: url.optional(),
});

export const gatewayConfigBody = z
  .strictObject({ name: name.optional(), byokRequired: z.boolean().optional(), deploymentTarget: z.enum(DEPLOYMENT_TARGETS).optional(), url: url.nullable().optional() })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'send at least one of name, byokRequired, deploymentTarget, url' });

export const rotateBody = z
  .strictObject({
    /** How long the replaced token still works, so every proxy of a fleet can take the new one (default 0: at once). */
    graceSeconds: z.number().int().min(0).max(86_400).default(0),
  })
  .default({ graceSeconds: 0 });

export const assignGatewayBody = z.strictObject({ gatewayId: z.string().min(1).max(64).nullable() });
