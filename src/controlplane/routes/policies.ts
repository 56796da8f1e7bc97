import type { z } from 'zod';
import { policyCreateBody, policyRollbackBody, policyUpdateBody, type PolicyCreate, type PolicyUpdate } from '../policies/content.js';
import { deletePolicy, livePolicies, livePolicy, policyVersion, policyVersions, setPolicyEnabled, writePolicyContent } from '../policies/store.js';
import { route, type Route } from '../router.js';

const actorOf = (principal: { workspaceId: string; memberId: string }) => ({ workspaceId: principal.workspaceId, memberId: principal.memberId });

function toggle(enabled: boolean): Route {
  return route.authed('OA', {
    method: 'POST',
    path: `/policies/:policyId/${enabled ? 'enable' : 'disable'}`,
    summary: enabled ? 'Enable a policy: gateways enforce its decide rules again' : 'Disable a policy: gateways stop enforcing it; its content and versions are kept',
    handler: async ({ services, principal, params }) => {
      const { result } = await services.changeConfig(principal.workspaceId, (tx) => setPolicyEnabled(tx, actorOf(principal), params.policyId!, enabled));
      return { body: result };
    },
  });
}

export const policyRoutes: Route[] = [
  route.authed('A', {
    method: 'GET',
    path: '/policy/resolve',
    summary: "The workspace's active rules: the SOP rules (blocks and holds with WHERE clauses) of its enabled policies, which gates fetch once per process",
    handler: async ({ services, principal }) => {
      const policies = await livePolicies(services.db, principal.workspaceId, true);
      return { body: { rules: policies.flatMap((p) => p.sop_rules.map((r) => ({ ...r, policyId: p.id, policyName: p.name }))) } };
    },
  }),
  route.authed('OAE', {
    method: 'GET',
    path: '/policies',
    summary: 'The live (not deleted) policies of the workspace',
    handler: async ({ services, principal }) => ({ body: { policies: await livePolicies(services.db, principal.workspaceId) } }),
  }),
  route.authed<PolicyCreate>('OA', {
    method: 'POST',
    path: '/policies',
    statuses: [201, 400, 401, 403, 409],
    summary: 'Create a policy (version 1): a name, a description, decide rules gateways enforce and SOP rules gates apply while it is enabled',
    body: policyCreateBody,
    handler: async ({ services, principal, body }) => {
      const content = { name: body.name, description: body.description ?? null, decide_rules: body.decide_rules, sop_rules: body.sop_rules };
      const { result } = await services.changeConfig(principal.workspaceId, (tx) => writePolicyContent(tx, actorOf(principal), null, content, 'create'));
      return { status: 201, body: result };
    },
  }),
  route.authed<PolicyUpdate>('OA', {
    method: 'PUT',
    path: '/policies/:policyId',
    statuses: [200, 400, 401, 403, 404, 409],
    summary: 'Change some of a policy\'s name, description, decide rules and SOP rules; records the next version',
    body: policyUpdateBody,
    handler: async ({ services, principal, params, body }) => {
      const { result } = await services.changeConfig(principal.workspaceId, async (tx) => {
        const current = await livePolicy(tx, principal.workspaceId, params.policyId!);
        const content = {
          name: body.name ?? current.name,
          description: body.description === undefined ? current.description : body.description,
          decide_rules: body.decide_rules ?? current.decide_rules,
          sop_rules: body.sop_rules ?? current.sop_rules,
        };
        return writePolicyContent(tx, actorOf(principal), current.id, content, 'update');
      });
      return { body: result };
    },
  }),
  route.authed('OA', {
    method: 'DELETE',
    path: '/policies/:policyId',
    summary: 'Delete a policy (soft: gateways drop it, its version history is kept)',
    handler: async ({ services, principal, params }) => {
      await services.changeConfig(principal.workspaceId, (tx) => deletePolicy(tx, actorOf(principal), params.policyId!));
      return { body: { deleted: true, id: params.policyId } };
    },
  }),
  route.authed('OAE', {
    method: 'GET',
    path: '/policies/:policyId/versions',
    summary: 'Every version of a policy, newest first (kept after it is deleted)',
    handler: async ({ services, principal, params }) => ({
      body: { policyId: params.policyId, versions: await policyVersions(services.db, principal.workspaceId, params.policyId!) },
    }),
  }),
  toggle(false),
  toggle(true),
  route.authed<z.infer<typeof policyRollbackBody>>('OA', {
    method: 'POST',
    path: '/policies/:policyId/rollback',
    summary: 'Restore the content of version N as a new version',
    body: policyRollbackBody,
    handler: async ({ services, principal, params, body }) => {
      const { result } = await services.changeConfig(principal.workspaceId, async (tx) => {
        const current = await livePolicy(tx, principal.workspaceId, params.policyId!);
        const content = await policyVersion(tx, current.id, body.version);
        return writePolicyContent(tx, actorOf(principal), current.id, content, 'rollback');
      });
      return { body: result };
    },
  }),
];
