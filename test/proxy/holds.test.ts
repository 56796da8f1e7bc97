import t from 'tap';
import OpenAI from 'openai';
import { startMockProvider } from '../../bench/mock/provider.js';
import { ControlPlaneApi } from '../../src/config/control-plane-api.js';
import { argumentsSha256 } from '../../src/lib/canonical-json.js';
import { createLogger } from '../../src/lib/logger.js';
import { HoldsClient } from '../../src/proxy/holds-client.js';
import { MemoryStore, type Store } from '../../src/state/index.js';
import { RedisStore } from '../../src/state/redis/redis-store.js';
import { api } from '../helpers/controlplane.js';
import { holdsWorkspace } from '../helpers/holds.js';
import { startProxy } from '../helpers/proxy.js';
import { startRedis } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

t.setTimeout(600_000);

// Holds end to end between a proxy and a real control plane: the HELD notice names the hold, a
// second member approves it, the identical call then goes through (and only it), approvals expire
// by the control plane's clock, and proxies of one workspace honour one approval.

let now = Date.parse('2026-04-01T12:00:00.000Z');
const clock = () => now;
const { cp, owner, em, dev, gateway, wasmDir } = await holdsWorkspace(t, { clock });
const env = { SVC_WASM_DIR: wasmDir };
const mock = await startMockProvider();
t.teardown(() => mock.close());

const silent = createLogger('silent');
const file = { workspaceId: owner.workspaceId, keys: [{ key: dev.apiKey, name: 'dev' }], settings: { reviewHoldBypassEnabled: true } };

async function proxyWith(opts: { controlPlaneUrl?: string; store?: Store } = {}) {
  const store = opts.store ?? new MemoryStore();
  const holds =
    opts.controlPlaneUrl === undefined && opts.store === undefined && arguments.length > 0 && (arguments[0] as { none?: boolean }).none
      ? undefined
      : new HoldsClient({ api: new ControlPlaneApi({ controlPlaneUrl: opts.controlPlaneUrl ?? cp.url, apiKey: owner.apiKey }), store, gatewayId: gateway, logger: silent, clock, timeoutMs: 1000 });
  const proxy = await startProxy(t, { upstreamUrl: mock.url, env, file, store, holds, clock });
  return { proxy, client: new OpenAI({ apiKey: dev.apiKey, baseURL: `${proxy.url}/v1`, maxRetries: 0 }) };
}

const tools = [{ type: 'function' as const, function: { name: 'bash', description: 'Run a shell command', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } }];
async function ask(client: OpenAI, command: string) {
  const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'go' }], tools }, { headers: { 'x-mock-tool-args': JSON.stringify({ command }) } });
  const message = res.choices[0]!.message;
  const text = message.content ?? '';
  return { ran: message.tool_calls?.length === 1, text, holdId: /\(hold (hold_[0-9A-Z]+)\)/.exec(text)?.[1], incidentId: /Incident (inc_[0-9A-Z]+)/.exec(text)?.[1] };
}
const review = (token: string, holdId: string, decision: 'approve' | 'reject') => api(cp, 'POST', `/decisions/${holdId}/review`, { token, body: { decision } });

const PUSH = 'git push --force origin main';
const { proxy: main, client } = await proxyWith();

t.test('a held call names its hold; a second member approves; the identical call goes through, another is held', async (t) => {
  const held = await ask(client, PUSH);
  t.notOk(held.ran);
  t.match(held.text, /^\[Svc Governance\] HELD: the bash tool call awaits a person's approval \(rule force-push: .*\) \(hold hold_\w+\)\. It was not run; do not retry it until a person has approved hold hold_\w+\. Incident inc_\w+\.$/);
  const hold = (await api(cp, 'GET', `/decisions/${held.holdId}`, { token: owner.accessToken })).body;
  t.match(hold, { state: 'held', tool: 'bash', rule: 'force-push', source: 'wasm', origin: 'proxy', requesterMemberId: dev.memberId, gatewayId: gateway, harness: 'openai-sdk', incidentId: held.incidentId });
  t.equal(hold.argumentsSha256, argumentsSha256({ command: PUSH }));
  t.same(hold.arguments, { command: PUSH });
  t.match(main.sink.recent().at(-1), { enforcement: 'HIJACK', toolCalls: [{ action: 'hold', rule: 'force-push', holdId: held.holdId, incidentId: held.incidentId, substituted: true }] });

  const again = await ask(client, PUSH);
  t.equal(again.holdId, held.holdId, 'asked again before review: the same pending hold');

  t.equal((await review(dev.accessToken, held.holdId!, 'approve')).status, 403, 'the requester (a developer) cannot approve');
  t.equal((await review(em.apiKey, held.holdId!, 'approve')).status, 200, 'an EM approves');

  const retried = await ask(client, PUSH);
  t.ok(retried.ran, 'the identical call now reaches the agent');
  const trace = main.sink.recent().at(-1)!;
  t.equal(trace.enforcement, 'BYPASS');
  t.match(trace.toolCalls, [{ action: 'hold_approved_bypass_used', rule: 'force-push', holdId: held.holdId, substituted: false }]);
  const events = await until('the bypass event', async () => {
    const rows = await cp.db.query<{ type: string; hold_id: string; gate_source: string; trace_id: string }>("SELECT type, hold_id, gate_source, trace_id FROM hook_events WHERE type = 'hold_approved_bypass_used'");
    return rows.length > 0 ? rows : undefined;
  });
  t.match(events, [{ hold_id: held.holdId, gate_source: 'proxy', trace_id: trace.id }]);

  const other = await ask(client, 'git push --force origin master');
  t.notOk(other.ran, 'a call with other arguments is held again');
  t.ok(other.holdId);
  t.not(other.holdId, held.holdId);
});

t.test('an approval expires on the control plane clock; a rejection releases nothing', async (t) => {
  const cmd = 'git push --force origin release/2.0';
  const held = await ask(client, cmd);
  await review(owner.accessToken, held.holdId!, 'approve');
  t.ok((await ask(client, cmd)).ran);
  now += 10 * 60_000;
  const expired = await ask(client, cmd);
  t.notOk(expired.ran, 'held again once the approval expired, cached or not');
  t.not(expired.holdId, held.holdId);
  await review(owner.accessToken, expired.holdId!, 'reject');
  const rejected = await ask(client, cmd);
  t.notOk(rejected.ran);
  t.not(rejected.holdId, expired.holdId, 'a rejected hold holds again, as a new hold');
});

t.test('with the bypass off, approval does not release the call', async (t) => {
  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { reviewHoldBypassEnabled: false } });
  const cmd = 'git push --force origin production';
  const held = await ask(client, cmd);
  t.match((await review(em.apiKey, held.holdId!, 'approve')).body, { state: 'approved', review: { bypassGranted: false } });
  const retried = await ask(client, cmd);
  t.notOk(retried.ran);
  t.ok(retried.holdId);
  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { reviewHoldBypassEnabled: true } });
});

t.test('a blocked call names the incident the control plane opened for it', async (t) => {
  const blocked = await ask(client, 'sudo rm -rf /');
  t.match(blocked.text, /^\[Svc Governance\] BLOCKED: the bash tool call was blocked by rule destructive-shell: .* It was not run\. Incident inc_\w+\.$/);
  const incident = (await api(cp, 'GET', `/incidents/${blocked.incidentId}`, { token: owner.accessToken })).body;
  t.match(incident, { kind: 'block', rule: 'destructive-shell', state: 'open' });
});

t.test('without a control plane, or with one that cannot be reached, the call stays held and says why there is no hold id', async (t) => {
  const alone = await startProxy(t, { upstreamUrl: mock.url, env, file });
  const none = await ask(new OpenAI({ apiKey: dev.apiKey, baseURL: `${alone.url}/v1`, maxRetries: 0 }), PUSH);
  t.notOk(none.ran);
  t.match(none.text, /HELD: .*; no hold id could be recorded: no control plane is configured\. It was not run; do not retry it\.$/);
  const { client: cutOff } = await proxyWith({ controlPlaneUrl: 'http://127.0.0.1:9' });
  const unreached = await ask(cutOff, PUSH);
  t.notOk(unreached.ran);
  t.match(unreached.text, /no hold id could be recorded: the control plane could not be reached\./);
});

t.test('two proxies of one workspace honour one approval; with Redis the approval is shared even when the control plane is out of reach', async (t) => {
  const redis = await startRedis(t);
  const { client: a } = await proxyWith({ store: new RedisStore({ url: redis.url, logger: silent }) });
  const { client: b } = await proxyWith({ store: new MemoryStore() });
  const cmd = 'git push --force origin prod';
  const held = await ask(a, cmd);
  t.equal((await ask(b, cmd)).holdId, held.holdId, 'both proxies record the same pending hold');
  await review(em.apiKey, held.holdId!, 'approve');
  t.ok((await ask(a, cmd)).ran, 'proxy A honours the approval');
  t.ok((await ask(b, cmd)).ran, 'proxy B honours the same approval');
  const { client: c } = await proxyWith({ controlPlaneUrl: 'http://127.0.0.1:9', store: new RedisStore({ url: redis.url, logger: silent }) });
  t.ok((await ask(c, cmd)).ran, 'a proxy sharing the Redis finds the approval A cached, without the control plane');
  const { client: d } = await proxyWith({ controlPlaneUrl: 'http://127.0.0.1:9' });
  t.notOk((await ask(d, cmd)).ran, 'one with its own store and no control plane holds it');
});

t.test("the workspace's MCP lists apply to the MCP tool calls a model emits", async (t) => {
  const proxy = await startProxy(t, { upstreamUrl: mock.url, env, file: { ...file, settings: { mcpAllowedServers: ['github'] } } });
  const openai = new OpenAI({ apiKey: dev.apiKey, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const mcpTool = (name: string) => [{ type: 'function' as const, function: { name, description: 'an MCP tool', parameters: { type: 'object', properties: {} } } }];
  const refused = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'file it' }], tools: mcpTool('mcp__gitlab__create_issue') });
  t.equal(refused.choices[0]!.message.tool_calls, undefined);
  t.match(refused.choices[0]!.message.content, /^\[Svc Governance\] BLOCKED: SERVER_NOT_ALLOWED: the mcp__gitlab__create_issue tool call was blocked by rule mcpAllowedServers: MCP server 'gitlab' is not on mcpAllowedServers\. It was not run\.$/);
  t.match(proxy.sink.recent().at(-1)!.toolCalls, [{ action: 'block', source: 'mcp', code: 'SERVER_NOT_ALLOWED', rule: 'mcpAllowedServers' }]);
  const allowed = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'file it' }], tools: mcpTool('mcp__github__create_issue') });
  t.equal(allowed.choices[0]!.message.tool_calls?.length, 1);
});

t.test("the MCP server registry (config.mcpServers, as a gateway syncs it) applies to the MCP tool calls a model emits", async (t) => {
  const mcpServers = { github: { status: 'held', disabledTools: [] }, jira: { status: 'approved', disabledTools: ['delete_issue'] } };
  const proxy = await startProxy(t, { upstreamUrl: mock.url, env, file: { ...file, mcpServers } });
  const openai = new OpenAI({ apiKey: dev.apiKey, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const ask = async (name: string) =>
    openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'do it' }], tools: [{ type: 'function', function: { name, description: 'an MCP tool', parameters: { type: 'object', properties: {} } } }] });
  t.match((await ask('mcp__github__create_issue')).choices[0]!.message.content, /^\[Svc Governance\] BLOCKED: SERVER_HELD: /);
  t.match((await ask('mcp__jira__delete_issue')).choices[0]!.message.content, /^\[Svc Governance\] BLOCKED: TOOL_DISABLED: /);
  t.equal((await ask('mcp__jira__get_issue')).choices[0]!.message.tool_calls?.length, 1);
});
