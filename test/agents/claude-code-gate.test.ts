import t from 'tap';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startMockProvider } from '../../bench/mock/provider.js';
import { agentSandbox, divergedClone, outcome, runClaudeCode } from '../helpers/agents.js';
import { signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { until } from '../helpers/until.js';
import { svc } from '../helpers/wasm.js';

// Claude Code talking straight to the (scripted) provider, no proxy in between: the gate hook
// `svc gates install` wrote is all that governs its tools.
t.setTimeout(600_000);

t.test('Claude Code with svc gates install and no proxy: a force push is refused by the hook and never runs, a touch runs, both decisions reach the control plane', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const { root, home, work } = await agentSandbox(t);
  const repo = await divergedClone(root, work);
  const before = await repo.remoteMain();
  const svcHome = join(root, 'svc');
  mkdirSync(join(home, '.claude'), { recursive: true });
  const env = { HOME: home, SVC_HOME: svcHome, SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey };

  const installed = await svc(['gates', 'install'], env);
  t.equal(installed.code, 0, installed.stderr);
  t.match(installed.stdout, /claude-code .*settings\.json: added the gate/);
  const synced = await svc(['gates', 'sync', '--root', work], env);
  t.equal(synced.code, 0, synced.stderr);

  mock.setScript({
    steps: [
      { tool: { name: 'Bash', input: { command: 'git push --force origin main', description: 'Force push' } } },
      { tool: { name: 'Bash', input: { command: 'touch allowed.txt', description: 'Create a file' } } },
      { text: 'The push was refused; the file is there.' },
    ],
  });
  const run = await runClaudeCode(t, { baseUrl: mock.url, apiKey: 'sk-ant-test', home, cwd: work, prompt: 'Force push main, then create allowed.txt.', env: { SVC_HOME: svcHome, SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey } });
  t.equal(run.code, 0, `claude exits 0 (${outcome(run)})`);
  t.match(run.stdout, /The push was refused; the file is there\./, 'the session completes');

  t.equal(await repo.remoteMain(), before, "the bare remote's main did not move: the push never ran");
  t.ok(existsSync(join(work, 'allowed.txt')), 'the allowed command ran');
  const bodies = mock.requests.filter((r) => r.route === 'messages').map((r) => JSON.stringify(r.body));
  t.ok(
    bodies.some((b) => b.includes('[Svc Governance] BLOCKED: SNAPSHOT: the Bash tool call was blocked by rule destructive:force-push')),
    'the refusal reached the model as the tool result',
  );

  const events = await until('both decisions at the control plane', async () => {
    const rows = await cp.db.query<{ type: string; tool: string; code: string | null; harness: string; gate_source: string }>(
      "SELECT type, tool, code, harness, gate_source FROM hook_events WHERE type IN ('tool_blocked', 'tool_allowed') ORDER BY received_at, id",
    );
    return rows.length >= 2 ? rows : undefined;
  });
  t.match(events, [
    { type: 'tool_blocked', tool: 'Bash', code: 'SNAPSHOT', harness: 'claude-code', gate_source: 'sdk' },
    { type: 'tool_allowed', tool: 'Bash', harness: 'claude-code' },
  ]);
});
