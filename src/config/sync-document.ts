import { z } from 'zod';
import { proxyConfigFileSchema } from './proxy-config.js';

const file = proxyConfigFileSchema.shape;

/**
 * What GET /api/v1/gateways/:id/config answers: everything a proxy takes from the control plane,
 * each part validated by the same schema as the proxy's own config file.
 */
export const gatewayConfigDocumentSchema = z.strictObject({
  gatewayId: z.string().min(1),
  workspaceId: z.string().min(1).max(128),
  /** The workspace's config version; every settings, credentials, keys or budget write bumps it. */
  version: z.number().int().min(1),
  config: z.strictObject({
    /** sha256 of every active vk_ key of the workspace. */
    keys: file.keys,
    providers: file.providers,
    settings: file.settings,
    budget: file.budget,
    byokRequired: file.byokRequired,
  }),
});

export type GatewayConfigDocument = z.infer<typeof gatewayConfigDocumentSchema>;
export type GatewayConfigDocumentInput = z.input<typeof gatewayConfigDocumentSchema>;

/** POST /gateways/:id/config-ack */
export const configAckSchema = z
  .strictObject({
    version: z.number().int().min(1),
    status: z.enum(['applied', 'rejected']),
    reason: z.string().min(1).max(2000).optional(),
  })
  .refine((a) => a.status === 'applied' || a.reason !== undefined, { message: 'a rejected config needs a reason', path: ['reason'] });

/** POST /gateways/:id/heartbeat */
export const heartbeatSchema = z.strictObject({
  /** The config version the proxy is serving with. */
  configVersion: z.number().int().min(0).optional(),
  inflight: z.number().int().min(0).optional(),
  tracesSpilled: z.number().int().min(0).optional(),
  tracesDropped: z.number().int().min(0).optional(),
  proxyVersion: z.string().max(64).optional(),
});

export type ConfigAck = z.infer<typeof configAckSchema>;
export type Heartbeat = z.infer<typeof heartbeatSchema>;
