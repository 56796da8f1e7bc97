import t from 'tap';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { api, signUp, startTestControlPlane, type Account, type TestControlPlane } from '../helpers/controlplane.js';
import { DROP_TABLE_RECORD, MODEL, pinFor, rule, startModel } from '../helpers/decide.js';
import { spawnProxy, type SpawnedProxy } from '../helpers/proxy.js';
import { compileRules } from '../helpers/wasm.js';
import { until } from '../helpers/until.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

const DROP = DROP_TABLE_RECORD;

const modules = await compileRules(t, ['destructive-shell', 'force-push']);
const mock = await startMockProvider();
t.teardown(() => mock.close());

/** A chat turn offering a bash tool; the mock model calls it with `command`. What reaches the agent. */
async function bash(proxy: SpawnedProxy, key: string, command: string) {
  const res = await request(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-mock-tool-args': JSON.stringify({ command }) },
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'do it' }],
      tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }],
    }),
  });
  const body = (await res.body.json()) as { choices: Array<{ message: { content: string | null; tool_calls?: unknown[] } }> };
  const message = body.choices[0]!.message;
  return { status: res.statusCode, called: (message.tool_calls?.length ?? 0) > 0, content: message.content ?? '' };
}

async function setup(t: Tap.Test, env: NodeJS.ProcessEnv = {}, prepare: (home: string) => Promise<void> = async () => undefined) {
  const cp: TestControlPlane = await startTestControlPlane(t);
  const owner: Account = await signUp(cp);
  const gateway = await api(cp, 'POST', '/gateways', { token: owner.accessToken, body: { name: 'edge' } });
  const home = await mkdtemp(join(tmpdir(), 'svc-proxy-home-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const wasmDir = join(home, 'wasm');
  await mkdir(wasmDir, { recursive: true });
  // A rule installed on this machine by hand: syncing must leave it alone.
  await copyFile(modules['force-push'], join(wasmDir, '50_local-force-push.wasm'));
  await prepare(home);
  const proxy = await spawnProxy(t, ['--threads', '1', '--control-plane-url', cp.url, '--api-key', owner.apiKey, '--gateway-id', gateway.body.id, '--upstream-url', mock.url], {
    SVC_HOME: home,
    SVC_DECIDE_ROOT: home,
    SVC_SYNC_POLL_MS: '60000',
    SVC_SYNC_HEARTBEAT_MS: '500',
    ...env,
  });
  const status = () => api(cp, 'GET', `/gateways/${gateway.body.id}/status`, { token: owner.accessToken }).then((r) => r.body);
  return { cp, owner, proxy, wasmDir, status, call: (method: string, path: string, body?: unknown) => api(cp, method, path, { token: owner.accessToken, body }) };
}

t.test('a WASM rule from the control plane is installed on a running proxy and substitutes a destructive call; DELETE restores it', async (t) => {
  const { owner, proxy, wasmDir, status, call, cp } = await setup(t);
  t.ok((await bash(proxy, owner.apiKey, 'sudo rm -rf /')).called, 'before: the call reaches the agent');

  const created = await call('POST', '/wasm-rules', { name: 'no-rm-rf', priority: 10, wasm: (await readFile(modules['destructive-shell'])).toString('base64') });
  t.equal(created.status, 201);
  const blocked = await until('the proxy to substitute rm -rf', async () => {
    const r = await bash(proxy, owner.apiKey, 'sudo rm -rf /');
    return r.called ? undefined : r;
  });
  t.match(blocked.content, /BLOCKED: the bash tool call was blocked by rule cp-no-rm-rf/);
  t.same((await readdir(wasmDir)).filter((f) => f.endsWith('.wasm')).sort(), ['10_cp-no-rm-rf.wasm', '50_local-force-push.wasm']);
  t.ok((await bash(proxy, owner.apiKey, 'ls -la')).called, 'a harmless call still passes');
  t.match((await bash(proxy, owner.apiKey, 'git push --force origin main')).content, /local-force-push/, 'the local rule keeps working');

  // A document whose module does not match its hash is refused whole; the rule in force stays.
  await cp.db.query(`UPDATE wasm_rules SET sha256 = $1 WHERE id = $2`, ['0'.repeat(64), created.body.id]);
  const invalidated = await api(cp, 'POST', '/mcp-daemon/policy-invalidate', { token: owner.apiKey });
  const rejected = await until('the rejected ack', async () => {
    const s = await status();
    return s.lastAck?.status === 'rejected' && s.lastAck.version === invalidated.body.version ? s : undefined;
  });
  t.match(rejected.lastAck.reason, /config\.wasmRules\.0\.sha256/);
  t.notOk((await bash(proxy, owner.apiKey, 'sudo rm -rf /')).called, 'the previous config keeps serving');
  await cp.db.query(`UPDATE wasm_rules SET sha256 = $1 WHERE id = $2`, [created.body.sha256, created.body.id]);

  t.equal((await call('DELETE', `/wasm-rules/${created.body.id}`)).status, 200);
  await until('the call to reach the agent again', async () => ((await bash(proxy, owner.apiKey, 'sudo rm -rf /')).called ? true : undefined));
  t.same((await readdir(wasmDir)).filter((f) => f.endsWith('.wasm')), ['50_local-force-push.wasm'], 'only the control plane\'s file is removed');
  await until('the applied ack', async () => ((await status()).lastAck?.status === 'applied' ? true : undefined));
});

t.test('a policy\'s enforcing decide rule reaches a running proxy; disabling the policy removes it', async (t) => {
  const model = await startModel(t);
  model.setAnswers([{ match: 'DROP TABLE', pYes: 0.97 }]);
  // The rule is pinned on the judge model, as `svc decide pin` would record it: enforcing rules need a pin.
  const { owner, proxy, call } = await setup(t, { SVC_DECIDE_URL: model.url, SVC_DECIDE_MODEL: MODEL }, async (home) => {
    await mkdir(join(home, 'decide'), { recursive: true });
    await writeFile(join(home, 'decide', 'pins.json'), JSON.stringify(pinFor(rule(DROP), MODEL)));
  });
  const drop = 'psql -c "DROP TABLE users"';
  t.ok((await bash(proxy, owner.apiKey, drop)).called, 'before: the call reaches the agent');

  const created = await call('POST', '/policies', { name: 'prod-safety', decide_rules: [DROP] });
  t.equal(created.status, 201);
  const refused = await until('the proxy to refuse the drop', async () => {
    const r = await bash(proxy, owner.apiKey, drop);
    return r.called ? undefined : r;
  });
  t.match(refused.content, /DECIDE_REFUSED: decide rule 'no-prod-drop'/);
  t.ok((await bash(proxy, owner.apiKey, 'ls -la')).called, 'a harmless call still passes');

  t.equal((await call('POST', `/policies/${created.body.id}/disable`)).status, 200);
  await until('the drop to reach the agent again', async () => ((await bash(proxy, owner.apiKey, drop)).called ? true : undefined));
  t.equal((await call('POST', `/policies/${created.body.id}/enable`)).status, 200);
  await until('the drop to be refused again', async () => ((await bash(proxy, owner.apiKey, drop)).called ? undefined : true));
});
