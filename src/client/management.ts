import type { z } from 'zod';
import { ControlPlaneApi, ControlPlaneValidationError, type HttpMethod } from '../config/control-plane-api.js';
import { signupOrgBody } from '../controlplane/contracts/auth.js';
import { assignGatewayBody, gatewayConfigBody, registerGatewayBody, rotateBody } from '../controlplane/contracts/gateways.js';
import { createOrgBody, createTeamBody, createWorkspaceBody } from '../controlplane/contracts/orgs.js';
import type { gatewayResolution } from '../controlplane/gateways/store.js';
import type { orgView, teamView } from '../controlplane/orgs/store.js';
import type { gatewayStatus } from '../controlplane/routes/gateways.js';

export {
  ControlPlaneConflictError,
  ControlPlaneForbiddenError,
  ControlPlaneHttpError,
  ControlPlaneNotFoundError,
  ControlPlaneRateLimitedError,
  ControlPlaneUnauthorizedError,
  ControlPlaneValidationError,
} from '../config/control-plane-api.js';

export interface ManagementClientOptions {
  /** The control plane's base URL (not the proxy's), e.g. http://localhost:3001. */
  baseUrl: string;
  /** A vk_ key or a login access token; admin-gated calls need OWNER or ADMIN on the workspace. */
  apiKey?: string;
  /** Per call, default 10 s. */
  timeoutMs?: number;
}

export type GatewayStatus = ReturnType<typeof gatewayStatus>;
export type RegisteredGateway = GatewayStatus & { token: string };
export type RotatedToken = { id: string; token: string; tokenLastFour: string; previousTokenValidUntil: string | null };
export type GatewayResolution = Awaited<ReturnType<typeof gatewayResolution>>;
export type Org = ReturnType<typeof orgView>;
export type Team = ReturnType<typeof teamView>;
export interface TeamWorkspace {
  id: string;
  name: string;
  plan: string;
  orgId: string;
  teamId: string;
  createdAt: string;
}
export interface CreatedWorkspace {
  workspace: { id: string; name: string; plan: string; orgId: string | null; teamId: string | null };
  member: { id: string; role: 'OWNER' };
  /** The new workspace's first vk_ key, shown once. */
  apiKey: { id: string; key: string; name: string; last_four: string; createdAt: string };
}
export interface Identity {
  id: string;
  role: 'OWNER' | 'ADMIN' | 'EM' | 'DEVELOPER' | 'VIEWER';
  displayName: string;
  user: { id: string; email: string; name: string; emailVerified: boolean };
  workspace: { id: string; name: string; plan: string };
}
export interface OrgSignup {
  org: Org;
  team: Team;
  user: { id: string; email: string; name: string; emailVerified: boolean };
  workspace: CreatedWorkspace['workspace'];
  member: CreatedWorkspace['member'];
  apiKey: CreatedWorkspace['apiKey'];
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}
export interface ProviderCredential {
  id: string;
  provisioned: boolean;
  last_four: string | null;
  routing_live: boolean;
  updated_at: string | null;
}

/**
 * The control plane's management API in code: orgs, teams and workspaces, gateways, provider
 * credentials. Bodies are checked with the same schemas the routes validate with before they are
 * sent (a bad one throws ControlPlaneValidationError without a request); every refusal of the
 * control plane throws its typed ControlPlane*Error with `status`, `code` and `reason`.
 */
export class ManagementClient {
  private readonly api: ControlPlaneApi;

  constructor(private readonly options: ManagementClientOptions) {
    this.api = new ControlPlaneApi({ controlPlaneUrl: options.baseUrl, apiKey: options.apiKey, timeoutMs: options.timeoutMs ?? 10_000 });
  }

  /** The member the key acts as, with their user and workspace. */
  async whoami(): Promise<Identity> {
    return this.call('GET', '/auth/me');
  }

  /** Signs up a new user as an org: the org, its first team and a workspace in it (no key needed). */
  async signupOrg(input: z.input<typeof signupOrgBody>): Promise<OrgSignup> {
    return this.call('POST', '/auth/signup/org', checked(signupOrgBody, input));
  }

  /** A new org owned by the caller (their workspace joins it when they own it). */
  async createOrg(name: string): Promise<Org & { workspaceJoined: boolean }> {
    return this.call('POST', '/orgs', checked(createOrgBody, { name }));
  }

  async listTeams(orgId: string): Promise<Team[]> {
    return (await this.call<{ teams: Team[] }>('GET', `/orgs/${segment(orgId)}/teams`)).teams;
  }

  async createTeam(orgId: string, name: string): Promise<Team> {
    return this.call('POST', `/orgs/${segment(orgId)}/teams`, checked(createTeamBody, { name }));
  }

  async listTeamWorkspaces(teamId: string): Promise<TeamWorkspace[]> {
    return (await this.call<{ workspaces: TeamWorkspace[] }>('GET', `/teams/${segment(teamId)}/workspaces`)).workspaces;
  }

  /** A workspace in the team with the caller as OWNER; the answer holds its first vk_ key. */
  async createWorkspace(teamId: string, name: string): Promise<CreatedWorkspace> {
    return this.call('POST', `/teams/${segment(teamId)}/workspaces`, checked(createWorkspaceBody, { name }));
  }

  /** Registers a gateway; the answer's `token` (gwt_…) is shown once: give it to the proxy as its --api-key. */
  async registerGateway(input: z.input<typeof registerGatewayBody>): Promise<RegisteredGateway> {
    return this.call('POST', '/gateways', checked(registerGatewayBody, input));
  }

  async listGateways(): Promise<GatewayStatus[]> {
    return (await this.call<{ gateways: GatewayStatus[] }>('GET', '/gateways')).gateways;
  }

  async getGatewayStatus(gatewayId: string): Promise<GatewayStatus> {
    return this.call('GET', `/gateways/${segment(gatewayId)}/status`);
  }

  /** A new gwt_ token; the old one stops at once, or after `graceSeconds`. */
  async rotateGatewayToken(gatewayId: string, options: z.input<typeof rotateBody> = {}): Promise<RotatedToken> {
    return this.call('POST', `/gateways/${segment(gatewayId)}/rotate`, checked(rotateBody, options));
  }

  /** Revokes the gateway: its token stops, its config is no longer served. */
  async revokeGateway(gatewayId: string): Promise<{ revoked: true; id: string }> {
    return this.call('DELETE', `/gateways/${segment(gatewayId)}`);
  }

  async setGatewayConfig(gatewayId: string, patch: z.input<typeof gatewayConfigBody>): Promise<GatewayStatus> {
    return this.call('PATCH', `/gateways/${segment(gatewayId)}/config`, checked(gatewayConfigBody, patch));
  }

  /** The gateway this workspace's agents use (null: fall back to the org's). */
  async assignWorkspaceGateway(gatewayId: string | null): Promise<GatewayResolution> {
    return this.call('PATCH', '/workspace/gateway', checked(assignGatewayBody, { gatewayId }));
  }

  /** The gateway every workspace of the org uses unless it has its own (org owner). */
  async assignOrgGateway(orgId: string, gatewayId: string | null): Promise<Org> {
    return this.call('PATCH', `/orgs/${segment(orgId)}/gateway`, checked(assignGatewayBody, { gatewayId }));
  }

  async resolveGateway(): Promise<GatewayResolution> {
    return this.call('GET', '/workspace/gateway-resolution');
  }

  async listProviderCredentials(): Promise<ProviderCredential[]> {
    return (await this.call<{ credentials: ProviderCredential[] }>('GET', '/workspace/provider-credentials')).credentials;
  }

  /** Provisions or rotates a provider's credential (fields as seed 001 names them, e.g. { apiKey }). */
  async setProviderCredential(provider: string, fields: Record<string, string>): Promise<ProviderCredential> {
    return this.call('PUT', `/workspace/provider-credentials/${segment(provider)}`, { fields });
  }

  async unsetProviderCredential(provider: string): Promise<unknown> {
    return this.call('DELETE', `/workspace/provider-credentials/${segment(provider)}`);
  }

  private call<T>(method: HttpMethod, path: string, body?: unknown): Promise<T> {
    return this.api.json<T>(method, path, body, { timeoutMs: this.options.timeoutMs ?? 10_000 });
  }
}

/** An id in a path: percent-encoded, never empty (an empty one would reach another route). */
function segment(id: string): string {
  if (typeof id !== 'string' || id.length === 0) throw new ControlPlaneValidationError(400, 'a request', JSON.stringify({ error: { code: 'validation', message: 'an id is required' } }));
  return encodeURIComponent(id);
}

/** The body as the route will read it; a body the route would refuse throws here, before any request. */
function checked<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }));
  throw new ControlPlaneValidationError(400, 'a request (checked before sending)', JSON.stringify({ error: { code: 'validation', message: issues.map((i) => `${i.path}: ${i.message}`).join('; '), details: { issues } } }));
}
