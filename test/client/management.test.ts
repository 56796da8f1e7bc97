import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import {
  ControlPlaneConflictError,
  ControlPlaneForbiddenError,
  ControlPlaneNotFoundError,
  ControlPlaneUnauthorizedError,
  ControlPlaneValidationError,
  ManagementClient,
} from '../../src/client/management.js';
import { api, memberWithRole, signUp, startTestControlPlane, type Account } from '../helpers/controlplane.js';
import { spawnProxy } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

const cp = await startTestControlPlane(t);

async function tempHome(t: Tap.Test) {
  const home = await mkdtemp(join(tmpdir(), 'svc-mgmt-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  return home;
}

const chat = (proxyUrl: string, key: string) =>
  request(`${proxyUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
  }).then(async (res) => ({ status: res.statusCode, body: await res.body.text() }));

t.test('a whole gateway lifecycle through the management client, with a real proxy syncing on its own token', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const owner = await signUp(cp);
  const admin = new ManagementClient({ baseUrl: cp.url, apiKey: owner.apiKey });

  const me = await admin.whoami();
  t.equal(me.role, 'OWNER');
  t.equal(me.workspace.id, owner.workspaceId);

  // Register: the token is shown once and names the gateway.
  const gateway = await admin.registerGateway({ name: 'edge-eu', deploymentTarget: 'kubernetes', url: 'http://edge.example.test:4000' });
  t.match(gateway, { name: 'edge-eu', deploymentTarget: 'kubernetes', byokRequired: false, url: 'http://edge.example.test:4000' });
  t.match(gateway.token, /^gwt_[0-9A-Z]{26}\./);
  t.equal(gateway.tokenLastFour, gateway.token.slice(-4));
  t.notOk(JSON.stringify(await admin.listGateways()).includes(gateway.token), 'the token is never listed again');

  // A real proxy syncs with nothing but the token, and applies the current config.
  const home = await tempHome(t);
  const proxy = await spawnProxy(t, ['--threads', '1', '--control-plane-url', cp.url, '--api-key', gateway.token, '--upstream-url', mock.url], { SVC_HOME: home });
  t.match(proxy.readyLine, `as ${gateway.id}`);
  await until('the proxy to apply the config', async () => ((await admin.getGatewayStatus(gateway.id)).inSync ? true : undefined));
  t.equal((await chat(proxy.url, owner.apiKey)).status, 200, "the workspace's key works through the proxy");

  // Config: the change reaches the running proxy with the next push.
  const changed = await admin.setGatewayConfig(gateway.id, { byokRequired: true, name: 'edge-eu-1' });
  t.match(changed, { name: 'edge-eu-1', byokRequired: true, inSync: false });
  await until('the proxy to apply the changed config', async () => ((await admin.getGatewayStatus(gateway.id)).inSync ? true : undefined));
  const refused = await chat(proxy.url, owner.apiKey);
  t.equal(refused.status, 402, 'bring-your-own-key is now enforced by the running proxy');
  t.match(refused.body, /byok_required/);

  // Rotate: the old token stops at once; the proxy keeps serving on its last good config.
  const rotated = await admin.rotateGatewayToken(gateway.id);
  t.not(rotated.token, gateway.token);
  t.equal(rotated.previousTokenValidUntil, null);
  t.equal((await api(cp, 'GET', `/gateways/${gateway.id}/config`, { token: gateway.token })).status, 401, 'the old token is refused');
  t.equal((await api(cp, 'GET', `/gateways/${gateway.id}/config`, { token: rotated.token })).status, 200, 'the new token works');
  t.equal((await chat(proxy.url, owner.apiKey)).status, 402, 'the proxy still serves (and still enforces) without the control plane answering it');

  // Revoke: the token stops, the gateway is gone from the list and reads as not found.
  t.same(await admin.revokeGateway(gateway.id), { revoked: true, id: gateway.id });
  t.equal((await api(cp, 'GET', `/gateways/${gateway.id}/config`, { token: rotated.token })).status, 401, 'a revoked gateway token is refused');
  await t.rejects(admin.getGatewayStatus(gateway.id), ControlPlaneNotFoundError);
  t.same(await admin.listGateways(), []);
  await t.rejects(admin.rotateGatewayToken(gateway.id), ControlPlaneNotFoundError, 'a revoked gateway cannot be brought back by a rotation');

  const timeline = await api(cp, 'GET', '/audit/timeline', { token: owner.accessToken });
  const kinds = timeline.body.events.map((e: { kind: string }) => e.kind);
  for (const kind of ['gateway.registered', 'gateway.config_changed', 'gateway.token_rotated', 'gateway.revoked']) t.ok(kinds.includes(kind), `${kind} is on the audit timeline`);
});

t.test('orgs, teams, workspaces and gateway resolution', async (t) => {
  const signup = await new ManagementClient({ baseUrl: cp.url }).signupOrg({
    email: `org-owner-${process.pid}-${Date.now()}@example.com`,
    password: 'correct horse battery',
    name: 'Org Owner',
    orgName: 'Acme',
  });
  t.match(signup, { org: { name: 'Acme' }, team: { name: 'Default' }, workspace: { orgId: signup.org.id, teamId: signup.team.id }, member: { role: 'OWNER' } });
  const owner = new ManagementClient({ baseUrl: cp.url, apiKey: signup.apiKey.key });

  const platform = await owner.createTeam(signup.org.id, 'Platform');
  await t.rejects(owner.createTeam(signup.org.id, 'Platform'), ControlPlaneConflictError, 'a team name is unique in its org');
  t.same((await owner.listTeams(signup.org.id)).map((team) => team.name), ['Default', 'Platform']);

  const created = await owner.createWorkspace(platform.id, 'payments');
  t.match(created, { workspace: { name: 'payments', orgId: signup.org.id, teamId: platform.id }, member: { role: 'OWNER' } });
  t.match(created.apiKey.key, /^vk_/);
  t.same((await owner.listTeamWorkspaces(platform.id)).map((w) => w.name), ['payments']);
  const payments = new ManagementClient({ baseUrl: cp.url, apiKey: created.apiKey.key });
  t.equal((await payments.whoami()).workspace.id, created.workspace.id, "the new workspace's key acts in it");

  // Resolution: none, then the org's gateway, then the workspace's own.
  t.match(await payments.resolveGateway(), { source: 'none', gateway: null });
  const orgGateway = await owner.registerGateway({ name: 'org-edge' });
  t.match(await owner.resolveGateway(), { source: 'only_gateway', gateway: { id: orgGateway.id } });
  t.match(await owner.assignOrgGateway(signup.org.id, orgGateway.id), { gatewayId: orgGateway.id });
  t.match(await payments.resolveGateway(), { source: 'org', orgId: signup.org.id, gateway: { id: orgGateway.id, name: 'org-edge' } });
  const own = await payments.registerGateway({ name: 'payments-edge' });
  t.match(await payments.assignWorkspaceGateway(own.id), { source: 'workspace', gateway: { id: own.id } });
  t.match(await payments.assignWorkspaceGateway(null), { source: 'org' });
  t.match(await payments.assignWorkspaceGateway(orgGateway.id), { source: 'workspace', gateway: { id: orgGateway.id } }, "an org's gateway may be a workspace's own choice");

  // Outsiders: another org's gateway, another owner's org.
  const stranger = await signUp(cp);
  const strangerClient = new ManagementClient({ baseUrl: cp.url, apiKey: stranger.apiKey });
  const foreign = await strangerClient.registerGateway({ name: 'elsewhere' });
  await t.rejects(payments.assignWorkspaceGateway(foreign.id), ControlPlaneNotFoundError, "another org's gateway is not assignable");
  await t.rejects(strangerClient.listTeams(signup.org.id), ControlPlaneNotFoundError, 'an org is invisible to outsiders');
  await t.rejects(strangerClient.createWorkspace(platform.id, 'sneaky'), ControlPlaneNotFoundError);
  const developer = await memberWithRole(cp, { accessToken: created.apiKey.key } as Account, 'DEVELOPER');
  const asDeveloper = new ManagementClient({ baseUrl: cp.url, apiKey: developer.apiKey });
  await t.rejects(asDeveloper.createTeam(signup.org.id, 'Not mine'), ControlPlaneForbiddenError, 'a member of an org workspace may read the org, not change it');
  t.same((await asDeveloper.listTeams(signup.org.id)).length, 2);

  // Revoking the org's gateway drops the assignments.
  await owner.revokeGateway(orgGateway.id);
  t.match(await payments.resolveGateway(), { source: 'only_gateway', gateway: { id: own.id } });
});

t.test('typed errors: bad bodies before sending, wrong role, no key, unknown ids, credentials', async (t) => {
  const owner = await signUp(cp);
  const admin = new ManagementClient({ baseUrl: cp.url, apiKey: owner.apiKey });
  const viewer = await memberWithRole(cp, owner, 'VIEWER');
  const asViewer = new ManagementClient({ baseUrl: cp.url, apiKey: viewer.apiKey });

  const invalid = await admin.registerGateway({ name: '' }).catch((err: unknown) => err);
  t.ok(invalid instanceof ControlPlaneValidationError, 'an empty name is refused before any request');
  t.match(invalid, { status: 400, code: 'validation' });
  await t.rejects(admin.setGatewayConfig('gw_x', {}), ControlPlaneValidationError, 'an empty change is refused');
  await t.rejects(admin.getGatewayStatus(''), ControlPlaneValidationError);
  await t.rejects(asViewer.registerGateway({ name: 'nope' }), ControlPlaneForbiddenError);
  await t.rejects(new ManagementClient({ baseUrl: cp.url }).listGateways(), ControlPlaneUnauthorizedError);
  await t.rejects(new ManagementClient({ baseUrl: cp.url, apiKey: 'vk_not_a_key_at_all' }).whoami(), ControlPlaneUnauthorizedError);
  const missing = await admin.revokeGateway('gw_01ARZ3NDEKTSV4RRFFQ69G5FAV').catch((err: unknown) => err);
  t.match(missing, { status: 404, code: 'NOT_FOUND', reason: /not found/ });

  t.match(await admin.setProviderCredential('openai', { apiKey: 'sk-test-credential-1234' }), { id: 'openai', provisioned: true, last_four: '1234' });
  t.match((await admin.listProviderCredentials()).find((c) => c.id === 'openai'), { provisioned: true, last_four: '1234' });
  await t.rejects(asViewer.setProviderCredential('openai', { apiKey: 'sk-test-credential-9999' }), ControlPlaneForbiddenError);
  await t.rejects(admin.setProviderCredential('openai', { apiKey: 'short' }), ControlPlaneValidationError);
  await admin.unsetProviderCredential('openai');
  t.match((await admin.listProviderCredentials()).find((c) => c.id === 'openai'), { provisioned: false });
  await t.rejects(admin.unsetProviderCredential('no-such-provider'), ControlPlaneNotFoundError);
});
