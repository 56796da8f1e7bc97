import t from 'tap';
import { access, copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockProvider, type MockProvider } from '../../bench/mock/provider.js';
import { agentSandbox, divergedClone, outcome, proxyTraces, runClaudeCode } from '../helpers/agents.js';
import { patientRulesConfig, spawnProxy, type SpawnedProxy } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';
import { compileRules, svc } from '../helpers/wasm.js';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';

// Claude Code itself (the npm package's native binary), run non-interactively through a real
// `svc proxy` with default settings; the only fake is the model provider, which plays a script.
t.setTimeout(900_000);

const AGENT_KEY = 'vk_claude_code_agent_1';
const PROVIDER_KEY = 'sk-ant-provider-key-for-tests';
const CARD = '4539 1488 0343 6467';

const mock: MockProvider = await startMockProvider({ requireKey: PROVIDER_KEY });
t.teardown(() => mock.close());

/** A real `svc proxy` in front of the mock, with its own state folder; `wasmDir` adds the rules in it. */
async function proxy(wasmDir?: string): Promise<SpawnedProxy & { home: string }> {
  const home = await mkdtemp(join(tmpdir(), 'svc-agent-proxy-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { SVC_HOME: home, SVC_VIRTUAL_KEYS: AGENT_KEY, ANTHROPIC_API_KEY: PROVIDER_KEY, SVC_WASM_DIR: wasmDir ?? join(home, 'wasm') };
  const spawned = await spawnProxy(t, ['--upstream-url', mock.url, '--config', await patientRulesConfig(home)], env);
  return { ...spawned, home };
}

const plain = await proxy();
const rules = await compileRules(t, ['force-push']);
const wasmDir = await mkdtemp(join(tmpdir(), 'svc-agent-rules-'));
t.teardown(() => rm(wasmDir, { recursive: true, force: true }));
await mkdir(wasmDir, { recursive: true });
await copyFile(rules['force-push'], join(wasmDir, '30_force-push.wasm'));
const guarded = await proxy(wasmDir);

const bodies = () => mock.requests.filter((r) => r.route === 'messages').map((r) => JSON.stringify(r.body));

t.test('a tool round trip: Bash creates the sentinel and the turn completes', async (t) => {
  mock.reset();
  mock.setScript({ steps: [{ tool: { name: 'Bash', input: { command: 'touch sentinel.txt', description: 'Create the sentinel' } } }, { text: 'Created the sentinel.' }] });
  const { home, work } = await agentSandbox(t);
  const startedAt = new Date().toISOString();
  const run = await runClaudeCode(t, { baseUrl: plain.url, apiKey: AGENT_KEY, home, cwd: work, prompt: 'Create the sentinel file.' });
  t.equal(run.code, 0, `claude exits 0 (${outcome(run)})`);
  t.match(run.stdout, /Created the sentinel\./);
  await access(join(work, 'sentinel.txt'));
  t.pass('the Bash tool ran: the sentinel exists');
  t.ok(bodies().some((b) => b.includes('"tool_result"')), 'the tool result went back to the provider');
  t.ok(mock.requests.every((r) => r.headers['x-api-key'] === PROVIDER_KEY), 'the provider saw the platform key, never the agent key');
  const traces = await until('the turn traces', async () => {
    const all = (await proxyTraces(plain.home)).filter((tr) => tr.time >= startedAt && tr.route === '/v1/messages');
    return all.length >= 2 ? all : undefined;
  });
  t.ok(traces.every((tr) => tr.status === 200 && tr.enforcement === 'BYPASS'), 'every model call passed untouched');
  t.ok(traces.every((tr) => tr.harness === 'claude-code'), 'recognised as Claude Code from what it sends');
  t.equal(new Set(traces.map((tr) => tr.session)).size, 1, 'one session, named by Claude Code itself');
  t.ok(traces[0]!.session, 'the session is known');
});

t.test('a card number in the prompt never reaches the provider', async (t) => {
  mock.reset();
  mock.setScript({ steps: [{ text: 'Noted.' }] });
  const { home, work } = await agentSandbox(t);
  const run = await runClaudeCode(t, { baseUrl: plain.url, apiKey: AGENT_KEY, home, cwd: work, prompt: `Remember my card ${CARD} for later.` });
  t.equal(run.code, 0, `claude exits 0 (${outcome(run)})`);
  t.match(run.stdout, /Noted\./);
  const sent = bodies();
  t.ok(sent.length > 0, 'the provider was asked');
  t.notOk(sent.some((b) => b.includes(CARD) || b.includes(CARD.replaceAll(' ', ''))), 'no request carried the card');
  t.ok(sent.some((b) => b.includes('[REDACTED:pii.card]')), 'it was redacted in place');
});

t.test('a force push is held: the remote does not move and Claude Code shows the HELD text', async (t) => {
  mock.reset();
  mock.setScript({ steps: [{ tool: { name: 'Bash', input: { command: 'git push --force origin main', description: 'Force push' } } }, { text: 'Pushed.' }] });
  const { root, home, work } = await agentSandbox(t);
  const repo = await divergedClone(root, work);
  const before = await repo.remoteMain();
  t.not(before, await repo.localMain(), 'only a forced push would move the remote');
  const run = await runClaudeCode(t, { baseUrl: guarded.url, apiKey: AGENT_KEY, home, cwd: work, prompt: 'Force push main.' });
  t.equal(run.code, 0, `claude exits 0 (${outcome(run)})`);
  t.match(run.stdout, /\[Svc Governance\] HELD: the Bash tool call awaits a person's approval/);
  t.equal(await repo.remoteMain(), before, "the remote's main is unchanged");
  t.notOk(bodies().some((b) => b.includes('"tool_result"')), 'Claude Code never ran the call, so it sent no result');
  const held = await until('the held call on a trace', async () =>
    (await proxyTraces(guarded.home)).find((tr) => (tr as { toolCalls?: Array<{ action: string }> }).toolCalls?.some((c) => c.action === 'hold')),
  );
  t.equal(held.enforcement, 'HIJACK', 'the agent was steered');
});

t.test('holds with a control plane: HELD names the hold, svc decision approve by a second member, the identical call then runs; other arguments, and any call once the bypass is off, stay held', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const dev = await memberWithRole(cp, owner, 'DEVELOPER');
  const em = await memberWithRole(cp, owner, 'EM');
  const setBypass = (on: boolean) => api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { reviewHoldBypassEnabled: on, reviewHoldBypassTtlMinutes: 10 } });
  await setBypass(true);
  const upload = await api(cp, 'POST', '/wasm-rules', { token: owner.accessToken, body: { name: 'force-push', priority: 30, wasm: (await readFile(rules['force-push'])).toString('base64') } });
  t.equal(upload.status, 201);

  const home = await mkdtemp(join(tmpdir(), 'svc-agent-linked-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const linked = await spawnProxy(t, ['--upstream-url', mock.url, '--control-plane-url', cp.url, '--api-key', owner.apiKey], {
    SVC_HOME: home,
    ANTHROPIC_API_KEY: PROVIDER_KEY,
    SVC_WASM_DIR: join(home, 'wasm'),
  });
  await until('the workspace rule on the proxy', async () => {
    const health = (await (await fetch(`${linked.url}/health`)).json()) as { wasm: { rules: Array<{ name: string }> } };
    return health.wasm.rules.some((r) => r.name === 'cp-force-push') ? true : undefined;
  });

  const { root, home: agentHome, work } = await agentSandbox(t);
  const repo = await divergedClone(root, work);
  const before = await repo.remoteMain();
  const bash = (command: string) => ({ tool: { name: 'Bash', input: { command, description: 'Force push' } } });
  const claude = async (command: string, prompt: string) => {
    mock.reset();
    mock.setScript({ steps: [bash(command), { text: 'Done with the push.' }] });
    const run = await runClaudeCode(t, { baseUrl: linked.url, apiKey: dev.apiKey, home: agentHome, cwd: work, prompt });
    t.equal(run.code, 0, `claude exits 0 (${outcome(run)})`);
    return { run, holdId: /\(hold (hold_[0-9A-Z]+)\)/.exec(run.stdout)?.[1], ranTool: bodies().some((b) => b.includes('"tool_result"')) };
  };
  const approve = (holdId: string, key: string) => svc(['decision', 'approve', holdId, '--reason', 'approved in the test', '--control-plane-url', cp.url, '--api-key', key], {});

  const first = await claude('git push --force origin main', 'Force push main.');
  t.match(first.run.stdout, /\[Svc Governance\] HELD: the Bash tool call awaits a person's approval \(rule cp-force-push: .*\) \(hold hold_\w+\)/);
  t.ok(first.holdId, 'Claude Code shows the hold id');
  t.notOk(first.ranTool);
  t.equal(await repo.remoteMain(), before, 'held: the remote did not move');
  t.match((await api(cp, 'GET', `/decisions/${first.holdId}`, { token: owner.accessToken })).body, { state: 'held', requesterMemberId: dev.memberId, harness: 'claude-code', arguments: { command: 'git push --force origin main' } });

  const approved = await approve(first.holdId!, em.apiKey);
  t.equal(approved.code, 0, `svc decision approve by the EM (${approved.stderr})`);
  t.match(approved.stdout, /approved; the identical call may run until/);

  const second = await claude('git push --force origin main', 'Try the force push again now that it is approved.');
  t.ok(second.ranTool, 'Claude Code ran the identical call and sent its result');
  t.match(second.run.stdout, /Done with the push\./);
  t.equal(await repo.remoteMain(), await repo.localMain(), 'the bare remote moved to the rewritten main');
  const bypass = await until('the bypass on a trace', async () =>
    (await proxyTraces(home)).find((tr) => (tr as { toolCalls?: Array<{ action: string }> }).toolCalls?.some((c) => c.action === 'hold_approved_bypass_used')),
  );
  t.match(bypass.toolCalls, [{ action: 'hold_approved_bypass_used', holdId: first.holdId }]);

  const other = await claude('git push --force origin HEAD:master', 'Force push to master too.');
  t.ok(other.holdId, 'a call with other arguments is held again');
  t.not(other.holdId, first.holdId);
  t.notOk(other.ranTool);

  await setBypass(false);
  await until('the proxy on the new config', async () => {
    const status = (await api(cp, 'GET', '/gateways', { token: owner.accessToken })).body.gateways[0];
    return status?.inSync === true ? true : undefined;
  });
  const off = await claude('git push --force origin HEAD:production', 'Force push to production.');
  t.ok(off.holdId);
  t.equal((await approve(off.holdId!, em.apiKey)).code, 0);
  const offAgain = await claude('git push --force origin HEAD:production', 'Try the production push again.');
  t.notOk(offAgain.ranTool, 'with the bypass off the approval only records the decision: still held');
  t.ok(offAgain.holdId);
  t.not(offAgain.holdId, off.holdId);
});
