import t from 'tap';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMockProvider } from '../../bench/mock/provider.js';
import { agentSandbox, divergedClone, outcome, runCodex } from '../helpers/agents.js';
import { writeSettings } from '../helpers/mcp.js';
import { svc } from '../helpers/wasm.js';

// Codex has no pre-tool hook: svc gates install compiles the snapshot's command rules into its
// exec-policy rules. Codex talks straight to the scripted provider, no proxy in between.
t.setTimeout(600_000);

t.test('Codex with svc gates install and no proxy: the snapshot forbids a force push, which never runs; a touch runs', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const { root, home, work } = await agentSandbox(t);
  const repo = await divergedClone(root, work);
  const before = await repo.remoteMain();
  const svcHome = join(root, 'svc');
  mkdirSync(svcHome);
  mkdirSync(join(home, '.codex'));
  const env = { HOME: home, SVC_HOME: svcHome };

  t.match((await svc(['gates', 'install', '--harness', 'codex'], env)).stdout, /left untouched: .*run svc gates sync first/, 'no snapshot yet: nothing to compile');
  t.equal((await svc(['gates', 'sync', '--config', writeSettings(svcHome, {})], env)).code, 0);
  const installed = await svc(['gates', 'install', '--harness', 'codex'], env);
  t.equal(installed.code, 0, installed.stderr);
  const rulesFile = join(home, '.codex', 'rules', 'svc-gate.rules');
  t.match(readFileSync(rulesFile, 'utf8'), /pattern = \["git", "push", "--force"\],\n {4}decision = "forbidden"/);
  t.match((await svc(['gates', 'install', '--harness', 'codex'], env)).stdout, /the gate is already there/);

  mock.setScript({
    steps: [
      { tool: { name: 'exec_command', input: { cmd: 'git push --force origin main' } } },
      { tool: { name: 'exec_command', input: { cmd: 'touch allowed.txt' } } },
      { text: 'Done.' },
    ],
  });
  const run = await runCodex(t, { baseUrl: `${mock.url}/v1`, apiKey: 'sk-test', home, cwd: work, prompt: 'Force push main, then create allowed.txt.', model: 'gpt-5.1-codex' });
  t.equal(run.code, 0, `codex exits 0 (${outcome(run)})`);
  t.equal(await repo.remoteMain(), before, "the bare remote's main did not move");
  t.ok(existsSync(join(work, 'allowed.txt')), 'the allowed command ran');
  const bodies = mock.requests.filter((r) => r.route === 'responses').map((r) => JSON.stringify(r.body));
  t.ok(bodies.some((b) => b.includes('destructive:force-push')), 'the model was told why');

  t.equal((await svc(['gates', 'uninstall', '--harness', 'codex'], env)).code, 0);
  t.notOk(existsSync(rulesFile));
});
