import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { active, Gate, GateClient, install, svcHeaders, SvcGateHold, SvcGateRefusal, wrapTool, wrapTools } from '../../src/gate/index.js';
import { compileSnapshot } from '../../src/gate/snapshot.js';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { freePort } from '../helpers/ports.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-gate-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const cp = await startTestControlPlane(t);
const owner = await signUp(cp);
const dev = await memberWithRole(cp, owner, 'DEVELOPER');
const em = await memberWithRole(cp, owner, 'EM');
await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { reviewHoldBypassEnabled: true, reviewHoldBypassTtlMinutes: 10, mcpAllowedServers: ['fs'] } });

const snapshotPath = join(dir, 'snapshot.rules');
writeFileSync(
  snapshotPath,
  compileSnapshot({
    workspaceId: owner.workspaceId,
    settings: { mcpAllowedServers: ['fs'] },
    mcpServers: {},
    memberGroups: null,
    rules: [{ verb: 'hold', id: 'review_before:action:release', tools: ['*'], actions: ['release'], reason: 'a release needs review' }],
  }),
);
const client = (extra: ConstructorParameters<typeof GateClient>[0] = {}) =>
  new GateClient({ baseUrl: cp.url, apiKey: dev.apiKey, workspaceId: owner.workspaceId, sessionId: 'sess-gate', harness: 'sdk-test', ...extra });
const gate = (c: GateClient | null = client()) => new Gate({ repoRoot: dir, snapshotPath }, c);
const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof SvcGateRefusal) return err;
    throw err;
  }
};
const events = () => cp.db.query<{ type: string; tool: string | null; code: string | null; hold_id: string | null; gate_source: string; harness: string }>('SELECT type, tool, code, hold_id, gate_source, harness FROM hook_events ORDER BY received_at, id');

t.test('tier 6, the hook gate: its verdict, its registry codes, and every decision reported', async (t) => {
  const c = client();
  const g = gate(c);
  await g.guard('Bash', { command: 'ls -la' });
  const blocked = await refusal(g.guard('mcp__github__create_issue', {}));
  t.equal(blocked?.code, 'SERVER_NOT_ALLOWED', 'the snapshot refuses first (tier 3)');
  await c.flush();
  const seen = await events();
  t.match(seen, [{ type: 'snapshot_health' }, { type: 'tool_allowed', tool: 'Bash', gate_source: 'sdk', harness: 'sdk-test' }, { type: 'tool_blocked', tool: 'mcp__github__create_issue', code: 'SERVER_NOT_ALLOWED' }]);
  await g.guard('read_file', { path: 'a' });
  await c.flush();
  t.equal((await events()).length, seen.length, 'a read-only tool skips the hook gate and its allow is not reported');
});

t.test('failClosed: an unreachable control plane blocks, or lets the call go; an unreadable request always blocks', async (t) => {
  const down = `http://127.0.0.1:${await freePort()}`;
  t.match(await refusal(gate(client({ baseUrl: down })).guard('Bash', { command: 'ls' })), { code: 'HOOK_GATE', message: /GOVERNANCE_UNAVAILABLE/ });
  t.equal(await refusal(gate(client({ baseUrl: down, failClosed: false })).guard('Bash', { command: 'ls' })), null);
  const invalid = await refusal(gate(client({ failClosed: false })).guard('x'.repeat(300), {}));
  t.match(invalid, { code: 'HOOK_GATE', message: /INVALID_REQUEST/ });
});

t.test('holds: recorded with an id through the client; an approval of the exact call lets it through once reviewed', async (t) => {
  const command = { command: 'gh release create v9.9.9' };
  const held = await refusal(gate().guard('Bash', command));
  t.ok(held instanceof SvcGateHold);
  const holdId = (held as SvcGateHold).holdId;
  t.match(holdId, /^hold_/);
  t.match(held!.message, new RegExp(`^\\[Svc Governance\\] HELD: .*hold ${holdId}`));
  t.equal((await api(cp, 'POST', `/decisions/${holdId}/review`, { token: em.apiKey, body: { decision: 'approve' } })).status, 200);
  t.equal(await refusal(gate().guard('Bash', command)), null, 'the identical call runs');
  t.ok(await refusal(gate().guard('Bash', { command: 'gh release create v10' })), 'another call stays held');
  t.match(await refusal(gate(null).guard('Bash', command)), { code: 'HELD', holdId: null }, 'no client: held without an id');
  const used = (await events()).filter((e) => e.type === 'hold_approved_bypass_used');
  t.equal(used.length, 1);
});

t.test('wrapTool: the first object argument is the input; idempotent; no gate throws', async (t) => {
  let ran = 0;
  const body = async (input: { command: string }) => {
    ran++;
    return `ran ${input.command}`;
  };
  const noGate = wrapTool('Bash', body);
  t.match(await refusal(noGate({ command: 'ls' })), { code: 'NO_GATE' });
  t.equal(ran, 0, 'never ran unguarded');
  install(new Gate({ repoRoot: dir, snapshotPath }));
  t.ok(active() instanceof Gate);
  t.equal(await noGate({ command: 'ls' }), 'ran ls');
  t.equal(wrapTool('Bash', noGate), noGate, 'wrapping a wrapped tool is a no-op');
  t.match(await refusal(noGate({ command: 'git push -f' })), { code: 'SNAPSHOT' });
  t.equal(ran, 1);
  const tools = wrapTools({ Bash: body, read: async () => 'text' });
  t.equal(await tools.read(), 'text');
});

t.test('GateClient.fromEnv and the headers helper', async (t) => {
  t.throws(() => GateClient.fromEnv({}), /session id/);
  const home = join(dir, 'svc-home');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(home);
  writeFileSync(join(home, 'credentials.json'), JSON.stringify({ apiKey: 'vk_stored_key_123456', workspaceId: 'ws_stored', controlPlaneUrl: 'http://127.0.0.1:3999' }));
  const c = GateClient.fromEnv({ SVC_HOME: home, SVC_SESSION_ID: 's1' });
  t.match(c, { apiKey: 'vk_stored_key_123456', workspaceId: 'ws_stored', baseUrl: 'http://127.0.0.1:3999', sessionId: 's1', harness: 'generic', failClosed: true, timeoutMs: 2000 });
  t.equal(GateClient.fromEnv({ SVC_HOME: home, SVC_SESSION_ID: 's1', SVC_API_KEY: 'vk_env_key_12345678' }).apiKey, 'vk_env_key_12345678', 'the environment wins');
  t.same(svcHeaders({ harness: 'my-agent' }, { SVC_SESSION_ID: 's2', SVC_WORKSPACE_ID: 'ws_2' }), { 'x-svc-harness': 'my-agent', 'x-session-id': 's2', 'x-workspace-id': 'ws_2' });
});

t.test("decide rules through the hook gate: DECIDE_REFUSED, and DECIDE_ESCALATED thrown as the escalation class", async (t) => {
  const { mkdir, writeFile } = await import('node:fs/promises');
  const { writePin } = await import('../../src/decide/pins.js');
  const { DROP_TABLE_RECORD, MODEL, pinFor, rule, startModel } = await import('../helpers/decide.js');
  const { SvcGateEscalation } = await import('../../src/gate/index.js');
  const model = await startModel(t);
  await mkdir(join(cp.home, 'decide'), { recursive: true });
  await writeFile(join(cp.home, 'decide', 'engine.json'), JSON.stringify({ url: model.url, model: MODEL }));
  const drop = rule(DROP_TABLE_RECORD);
  await writePin({ SVC_HOME: cp.home }, drop.record.id, pinFor(drop, MODEL)[drop.record.id]!);
  t.equal((await api(cp, 'POST', '/policies', { token: owner.accessToken, body: { name: 'no-drops', decide_rules: [DROP_TABLE_RECORD] } })).status, 201);
  model.setAnswers([{ match: 'DROP TABLE', pYes: 0.97 }, { match: 'TRUNCATE', pYes: 0.5 }]);
  const psql = (sql: string, harness = 'sdk-test') => gate(client({ harness })).guard('bash', { command: `psql -c "${sql}"` });
  t.match(await refusal(psql('DROP TABLE users')), { code: 'DECIDE_REFUSED', rule: 'no-prod-drop' });
  const escalated = await refusal(psql('TRUNCATE users', 'ci'));
  t.ok(escalated instanceof SvcGateEscalation);
  t.match(escalated, { code: 'DECIDE_ESCALATED' });
  t.equal(await refusal(psql('SELECT 1')), null);
});

t.test('tier 4, the SOP register: rules with WHERE clauses from GET /policy/resolve, fetched once, failing open', async (t) => {
  const bad = await api(cp, 'POST', '/policies', { token: owner.accessToken, body: { name: 'broken-sop', sop_rules: [{ id: 'x', action: 'block', where: "command LIKE 'x'", reason: 'r' }] } });
  t.equal(bad.status, 400);
  t.match(bad.body.error.message, /WHERE clause does not read/);
  const created = await api(cp, 'POST', '/policies', {
    token: owner.accessToken,
    body: {
      name: 'prod-guard',
      sop_rules: [
        { id: 'no-prod-db', action: 'block', tools: ['Bash'], where: "command CONTAINS 'prod-db'", reason: 'agents do not touch the production database' },
        { id: 'big-batch', action: 'require_approval', tools: ['*'], where: 'count > 100', reason: 'a batch this big needs review' },
      ],
    },
  });
  t.equal(created.status, 201);
  t.match((await api(cp, 'GET', '/policy/resolve', { token: dev.apiKey })).body.rules, [{ id: 'no-prod-db', policyName: 'prod-guard' }, { id: 'big-batch' }]);

  const g = gate();
  t.match(await refusal(g.guard('Bash', { command: 'psql -h prod-db.internal' })), { code: 'SOP_RULE', rule: 'no-prod-db', message: /^\[Svc Governance\] BLOCKED: SOP_RULE: the Bash tool call was blocked by SOP rule no-prod-db/ });
  const held = await refusal(g.guard('import_rows', { count: 500 }));
  t.ok(held instanceof SvcGateHold);
  t.match(held, { rule: 'big-batch', holdId: /^hold_/ });
  t.equal(await refusal(g.guard('import_rows', { count: 5 })), null);
  t.equal(await refusal(g.guard('read_file', { path: 'prod-db.conf' })), null, 'read-only tools skip the tier');

  await api(cp, 'POST', `/policies/${created.body.id}/disable`, { token: owner.accessToken });
  t.match(await refusal(g.guard('Bash', { command: 'psql -h prod-db.internal' })), { code: 'SOP_RULE' }, 'fetched once per process: the gate keeps what it read');
  t.equal(await refusal(gate().guard('Bash', { command: 'psql -h prod-db.internal' })), null, 'a new process reads the register again');

  const down = `http://127.0.0.1:${await freePort()}`;
  const offline = new Gate({ repoRoot: dir, snapshotPath, useHookGate: false }, client({ baseUrl: down }));
  t.equal(await refusal(offline.guard('Bash', { command: 'psql -h prod-db.internal' })), null, 'no register to fetch: the tier fails open');
});
