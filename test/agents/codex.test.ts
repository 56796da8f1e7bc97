import t from 'tap';
import { access, copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockProvider, type MockProvider, type ScriptStep } from '../../bench/mock/provider.js';
import { agentSandbox, divergedClone, outcome, proxyTraces, runCodex } from '../helpers/agents.js';
import { patientRulesConfig, spawnProxy, type SpawnedProxy } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';
import { compileRules } from '../helpers/wasm.js';

// Codex CLI itself (the npm package's native binary), run non-interactively (`codex exec`) through
// a real `svc proxy` with default settings, in both of its tool styles: code mode (its default
// model: one freeform `exec` tool whose input is JavaScript calling `tools.exec_command`) and
// function tools (`exec_command` called with JSON arguments). The model provider plays a script.
t.setTimeout(900_000);

const AGENT_KEY = 'vk_codex_agent_1';
const PROVIDER_KEY = 'sk-openai-provider-key-for-tests';
const CARD = '4539 1488 0343 6467';
/** A model Codex drives with function tools (its default model uses code mode). */
const FUNCTION_TOOLS_MODEL = 'gpt-5.1-codex';

const mock: MockProvider = await startMockProvider({ requireKey: PROVIDER_KEY });
t.teardown(() => mock.close());

async function proxy(wasmDir?: string): Promise<SpawnedProxy & { home: string }> {
  const home = await mkdtemp(join(tmpdir(), 'svc-agent-proxy-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { SVC_HOME: home, SVC_VIRTUAL_KEYS: AGENT_KEY, OPENAI_API_KEY: PROVIDER_KEY, SVC_WASM_DIR: wasmDir ?? join(home, 'wasm') };
  return { ...(await spawnProxy(t, ['--upstream-url', mock.url, '--config', await patientRulesConfig(home)], env)), home };
}

const plain = await proxy();
const rules = await compileRules(t, ['force-push']);
const wasmDir = await mkdtemp(join(tmpdir(), 'svc-agent-rules-'));
t.teardown(() => rm(wasmDir, { recursive: true, force: true }));
await copyFile(rules['force-push'], join(wasmDir, '30_force-push.wasm'));
const guarded = await proxy(wasmDir);

/** The call each tool style makes to run `command`. */
const callFor = {
  'code mode': (command: string): ScriptStep => ({
    tool: { name: 'exec', input: `const r = await tools.exec_command({cmd: ${JSON.stringify(command)}});\ntext(r.output);` },
  }),
  'function tools': (command: string): ScriptStep => ({ tool: { name: 'exec_command', input: { cmd: command } } }),
};
const modelFor = { 'code mode': undefined, 'function tools': FUNCTION_TOOLS_MODEL };
type Style = keyof typeof callFor;
const STYLES = Object.keys(callFor) as Style[];

const bodies = () => mock.requests.filter((r) => r.route === 'responses').map((r) => JSON.stringify(r.body));
const hasResult = (b: string) => /"type":"(?:function_call|custom_tool_call)_output"/.test(b);

for (const style of STYLES) {
  t.test(`${style}: a tool round trip creates the sentinel and the turn completes`, async (t) => {
    mock.reset();
    mock.setScript({ steps: [callFor[style]('touch sentinel.txt'), { text: 'Created the sentinel.' }] });
    const { home, work } = await agentSandbox(t);
    const startedAt = new Date().toISOString();
    const run = await runCodex(t, { baseUrl: `${plain.url}/v1`, apiKey: AGENT_KEY, home, cwd: work, prompt: 'Create the sentinel file.', model: modelFor[style] });
    t.equal(run.code, 0, `codex exits 0 (${outcome(run)})`);
    t.match(run.stdout, /Created the sentinel\./);
    await access(join(work, 'sentinel.txt'));
    t.pass('the command ran: the sentinel exists');
    t.ok(bodies().some(hasResult), 'the tool result went back to the provider');
    t.ok(mock.requests.every((r) => r.headers.authorization === `Bearer ${PROVIDER_KEY}`), 'the provider saw the platform key, never the agent key');
    const traces = await until('the turn traces', async () => {
      const all = (await proxyTraces(plain.home)).filter((tr) => tr.time >= startedAt && tr.route === '/v1/responses');
      return all.length >= 2 ? all : undefined;
    });
    t.ok(traces.every((tr) => tr.status === 200), 'every model call succeeded');
    t.ok(traces.every((tr) => tr.harness === 'codex'), 'recognised as Codex from what it sends');
    t.equal(new Set(traces.map((tr) => tr.session)).size, 1, 'one session, named by Codex itself');
    t.ok(traces[0]!.session, 'the session is known');
  });

  t.test(`${style}: a force push is held: the remote does not move and Codex shows the HELD text`, async (t) => {
    mock.reset();
    mock.setScript({ steps: [callFor[style]('git push --force origin main'), { text: 'Pushed.' }] });
    const { root, home, work } = await agentSandbox(t);
    const repo = await divergedClone(root, work);
    const before = await repo.remoteMain();
    const run = await runCodex(t, { baseUrl: `${guarded.url}/v1`, apiKey: AGENT_KEY, home, cwd: work, prompt: 'Force push main.', model: modelFor[style] });
    t.equal(run.code, 0, `codex exits 0 (${outcome(run)})`);
    t.match(run.stdout, /\[Svc Governance\] HELD: the \w+ tool call awaits a person's approval/);
    t.equal(await repo.remoteMain(), before, "the remote's main is unchanged");
    t.notOk(bodies().some(hasResult), 'Codex never ran the call, so it sent no result');
  });
}

t.test('a card number in the prompt never reaches the provider', async (t) => {
  mock.reset();
  mock.setScript({ steps: [{ text: 'Noted.' }] });
  const { home, work } = await agentSandbox(t);
  const run = await runCodex(t, { baseUrl: `${plain.url}/v1`, apiKey: AGENT_KEY, home, cwd: work, prompt: `Remember my card ${CARD} for later.` });
  t.equal(run.code, 0, `codex exits 0 (${outcome(run)})`);
  t.match(run.stdout, /Noted\./);
  const sent = bodies();
  t.ok(sent.length > 0, 'the provider was asked');
  t.notOk(sent.some((b) => b.includes(CARD) || b.includes(CARD.replaceAll(' ', ''))), 'no request carried the card');
  t.ok(sent.some((b) => b.includes('[REDACTED:pii.card]')), 'it was redacted in place');
});
